// The baseline of the HTTP benchmark: Koa + @koa/router + @koa/bodyparser answering a fixed JSON body,
// i.e. what the evaluation endpoint would cost if evaluating were free.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';

const fixed = { 'flag-0': { value: true, reason: 'rule_match', variation: 'on', ruleId: 'eu-new-app' } };
const app = new Koa();
const router = new Router();
router.post('/v1/evaluate', (ctx) => {
  ctx.body = fixed;
});
app.use(bodyParser());
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ evalUrl: `http://127.0.0.1:${server.address().port}`, key: 'none' })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
