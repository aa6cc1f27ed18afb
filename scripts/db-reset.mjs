// `npm run db:reset`: throws away the local database of `npm run dev` (or DEV_STATE_DIR's) and makes a fresh one:
// migrations applied, demo data seeded, a new demo API key printed. Stop `npm run dev` first: a running server keeps
// the deleted database open and would go on serving it until restarted.
import { assertNodeVersion } from './wrangler.mjs';
import { deleteLocalDatabase, prepareLocalDatabase } from './local-db.mjs';
import { DEMO_USER } from './seed.mjs';

assertNodeVersion();
console.log(`Deleted the local database (${deleteLocalDatabase()}).`);
const demoKey = prepareLocalDatabase();
console.log(`
  Fresh local database.
  Demo user:     ${DEMO_USER.email} / ${DEMO_USER.password} (wallet: $100.00)
  Demo API key:  ${demoKey}
  Start the server with: npm run dev
`);
