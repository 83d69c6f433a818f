#!/usr/bin/env node
// A local OpenID Connect provider for trying single sign-on without a real one (docs/dashboard.md, "Try it
// locally"): oidc-provider (a devDependency, so after `npm ci` in a checkout) on a loopback port, with one client
// and three people. Not for production: people and client are fixed, and everything is kept in memory.
//
//   node scripts/oidc-dev-provider.mjs [--port 4010] [--redirect-uri http://127.0.0.1:4000/auth/oidc/callback]
import { parseArgs } from 'node:util';
import { startTestProvider } from '../test/helpers/oidc-provider.mjs';

const USAGE = `Usage: node scripts/oidc-dev-provider.mjs [--port 4010] [--redirect-uri URL]

A local OpenID Connect provider for trying single sign-on (docs/dashboard.md, "Try it locally"): one client
(flagops-dev / flagops-dev-secret) and three people, kept in memory. Not for production.

  --port N            the loopback port it listens on (default 4010)
  --redirect-uri URL  the service's callback (default http://127.0.0.1:4000/auth/oidc/callback)
  -h, --help          this text
`;

let options;
try {
  options = parseArgs({
    options: { port: { type: 'string', default: '4010' }, 'redirect-uri': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  }).values;
} catch (err) {
  process.stderr.write(`oidc-dev-provider: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const port = Number(options.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write(`oidc-dev-provider: --port must be a port number (1-65535), got ${JSON.stringify(options.port)}\n`);
  process.exit(2);
}
const arg = (name, fallback) => options[name.replace(/^--/, '')] ?? fallback;

const DEV_PEOPLE = [
  { id: 'dev-alice', login: 'alice', password: 'alice', email: 'alice@example.com', groups: ['flag-admins'] },
  { id: 'dev-sam', login: 'sam', password: 'sam', email: 'sam@example.com', groups: ['shop-devs'] },
  { id: 'dev-uma', login: 'uma', password: 'uma', email: 'uma@example.com', groups: ['marketing'] },
];

const provider = await startTestProvider({
  people: DEV_PEOPLE,
  port,
  clientId: 'flagops-dev',
  clientSecret: 'flagops-dev-secret',
});
await provider.registerRedirectUri(arg('--redirect-uri', 'http://127.0.0.1:4000/auth/oidc/callback'));
console.log(`issuer ${provider.issuer}`);
console.log('people: alice/alice (flag-admins), sam/sam (shop-devs), uma/uma (marketing, mapped to nothing)');
const stop = () => provider.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
