#!/usr/bin/env node
// A local OpenID Connect provider for trying single sign-on without a real one (docs/dashboard.md, "Try it
// locally"): oidc-provider (a devDependency, so after `npm ci` in a checkout) on a loopback port, with one client
// and three people. Not for production: people and client are fixed, and everything is kept in memory.
//
//   node scripts/oidc-dev-provider.mjs [--port 4010] [--redirect-uri http://127.0.0.1:4000/auth/oidc/callback]
import { startTestProvider } from '../test/helpers/oidc-provider.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};

const DEV_PEOPLE = [
  { id: 'dev-alice', login: 'alice', password: 'alice', email: 'alice@example.com', groups: ['flag-admins'] },
  { id: 'dev-sam', login: 'sam', password: 'sam', email: 'sam@example.com', groups: ['shop-devs'] },
  { id: 'dev-uma', login: 'uma', password: 'uma', email: 'uma@example.com', groups: ['marketing'] },
];

const provider = await startTestProvider({
  people: DEV_PEOPLE,
  port: Number(arg('--port', '4010')),
  clientId: 'flagops-dev',
  clientSecret: 'flagops-dev-secret',
});
await provider.registerRedirectUri(arg('--redirect-uri', 'http://127.0.0.1:4000/auth/oidc/callback'));
console.log(`issuer ${provider.issuer}`);
console.log('people: alice/alice (flag-admins), sam/sam (shop-devs), uma/uma (marketing, mapped to nothing)');
const stop = () => provider.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
