import { consoleAudit } from './audit';
import { consoleBlocklist } from './blocklist';
import { consoleClaims } from './claims';
import { consoleCoupons } from './coupons';
import { consoleDeposits } from './deposits';
import { consoleEmails } from './emails';
import { consoleExports } from './exports';
import { consoleOrders } from './orders';
import { consoleOverview } from './overview';
import { consolePayments } from './payments';
import { consoleProducts } from './products';
import { consoleReferrals } from './referrals';
import { consoleRevokedItems } from './revoked-items';
import { consoleUsers } from './users';
import { consoleDocuments } from './documents';

// The operator console: a second part of the dashboard under /dashboard/console, same layout, stylesheet, session,
// CSRF and forms, over the admin API's service functions. Every page and form answers only an operator's session
// (src/middleware/session.ts: requireOperatorSession); a signed-in non-operator gets 404.

export const consolePages = [consoleOverview, consoleProducts, consoleOrders, consoleUsers, consoleDeposits, consoleRevokedItems, consoleAudit, consoleEmails, consoleCoupons, consoleExports, consolePayments, consoleClaims, consoleBlocklist, consoleDocuments, consoleReferrals];
