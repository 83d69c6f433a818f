// The floor of the HTTP benchmark: node:http alone reading the body, parsing it and answering a fixed JSON
// body: what Node's HTTP stack costs on this core, with no framework and no evaluation.
import http from 'node:http';

const fixed = JSON.stringify({ 'flag-0': { value: true, reason: 'rule_match', variation: 'on', ruleId: 'eu-new-app' } });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(fixed) });
    res.end(fixed);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ evalUrl: `http://127.0.0.1:${server.address().port}`, key: 'none' })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
