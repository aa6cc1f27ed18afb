#!/usr/bin/env bash
# Checks the README quickstart on this checkout: `npm run dev` migrates, seeds, prints a demo key and serves,
# and the key buys something. Run by .ci/run; safe to run by hand (uses its own port, stops the server after).
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${QUICKSTART_PORT:-${PORT:-8799}}"
LOG="$(mktemp)"
STATE="$(mktemp -d)"
# Its own process group, so stopping it also stops wrangler's workerd child.
PORT="$PORT" DEV_STATE_DIR="$STATE" setsid npm run dev >"$LOG" 2>&1 &
DEV_PID=$!
stop_dev() {
  kill -TERM -- "-$DEV_PID" 2>/dev/null || true
  sleep 2
  kill -KILL -- "-$DEV_PID" 2>/dev/null || true
  rm -rf "$STATE"
}
trap stop_dev EXIT

for _ in $(seq 1 120); do
  grep -q "Demo API key" "$LOG" && grep -q "Ready on" "$LOG" && break
  if ! kill -0 "$DEV_PID" 2>/dev/null; then cat "$LOG"; echo "quickstart: npm run dev exited early"; exit 1; fi
  sleep 1
done
KEY="$(sed -n 's/.*Demo API key: *\(sk_live_[0-9A-Za-z]*\).*/\1/p' "$LOG" | head -1)"
if [ -z "$KEY" ]; then cat "$LOG"; echo "quickstart: no demo API key printed"; exit 1; fi

# The README's tour, word for word but for the key, the port, and curl failing on HTTP errors.
TOUR="$(sed -n '/<!-- tour:start -->/,/<!-- tour:end -->/p' README.md | sed '/^<!--/d; /^```/d' \
  | sed "s/^export KEY=.*/export KEY=$KEY/; s/localhost:8787/localhost:$PORT/g; s/curl -s /curl -fsS /")"
[ -n "$TOUR" ] || { echo "quickstart: no tour found in README.md"; exit 1; }
bash -euo pipefail -c "$TOUR" >"$LOG.tour"
grep -q '"balance":125' "$LOG.tour" && grep -q '"stock_items"' "$LOG.tour" && grep -q '"refunded_amount":4.99' "$LOG.tour" \
  && grep -q '"type":"refund"' "$LOG.tour" && grep -q '"type":"deposit"' "$LOG.tour" \
  || { cat "$LOG.tour"; echo "quickstart: the README tour did not fund, buy, cancel and refund"; exit 1; }
echo "quickstart: npm run dev printed a demo key and the README tour ran ($(grep -c '^curl' <<<"$TOUR") requests)"

# The README's local cron trigger, as written but for the port: the path this wrangler serves runs the worker's
# scheduled handler, which logs one line per run.
CRON="$(grep -o 'curl "http://localhost:8787/[^"]*scheduled[^"]*"' README.md | head -1 | sed "s/localhost:8787/localhost:$PORT/; s/^curl /curl -fsS /")"
[ -n "$CRON" ] || { echo "quickstart: no local cron trigger found in README.md"; exit 1; }
bash -euo pipefail -c "$CRON" >/dev/null || { echo "quickstart: the README's cron trigger failed: $CRON"; exit 1; }
for _ in $(seq 1 20); do grep -q '"msg":"scheduled jobs"' "$LOG" && break; sleep 0.5; done
grep -q '"msg":"scheduled jobs"' "$LOG" || { cat "$LOG"; echo "quickstart: the README's cron trigger did not run the scheduled jobs"; exit 1; }
echo "quickstart: the README's cron trigger ran the scheduled jobs"

# The dashboard URL and the demo user the banner prints: signing in answers 303 to the dashboard with a session cookie.
DASHBOARD="$(sed -n 's/.*Dashboard: *\(http[^ ]*\).*/\1/p' "$LOG" | head -1)"
EMAIL="$(sed -n 's/.*Demo user: *\([^ ]*\) \/ .*/\1/p' "$LOG" | head -1)"
PASSWORD="$(sed -n 's/.*Demo user: *[^ ]* \/ \([^ ]*\) .*/\1/p' "$LOG" | head -1)"
SIGN_IN="$(curl -sS -o /dev/null -D - -H "Origin: http://localhost:$PORT" --data-urlencode "email=$EMAIL" \
  --data-urlencode "password=$PASSWORD" "$DASHBOARD/sign-in" | tr -d '\r')"
grep -q '^HTTP/1.1 303' <<<"$SIGN_IN" && grep -qi '^location: /dashboard$' <<<"$SIGN_IN" && grep -qi '^set-cookie: dashboard_session=' <<<"$SIGN_IN" \
  || { echo "$SIGN_IN"; echo "quickstart: the printed demo user could not sign in at $DASHBOARD"; exit 1; }
echo "quickstart: the printed demo user signs in to the dashboard"

# The demo operator the banner prints: signs in, and its session opens the console's overview.
OP_EMAIL="$(sed -n 's/.*Demo operator: *\([^ ]*\) \/ .*/\1/p' "$LOG" | head -1)"
OP_PASSWORD="$(sed -n 's/.*Demo operator: *[^ ]* \/ \([^ ]*\) .*/\1/p' "$LOG" | head -1)"
OP_COOKIE="$(curl -sS -o /dev/null -D - -H "Origin: http://localhost:$PORT" --data-urlencode "email=$OP_EMAIL" \
  --data-urlencode "password=$OP_PASSWORD" "$DASHBOARD/sign-in" | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: \(dashboard_session=[^;]*\).*/\1/p')"
CONSOLE_STATUS="$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: $OP_COOKIE" "$DASHBOARD/console")"
[ -n "$OP_COOKIE" ] && [ "$CONSOLE_STATUS" = 200 ] \
  || { echo "quickstart: the printed demo operator ($OP_EMAIL) could not open $DASHBOARD/console (status $CONSOLE_STATUS)"; exit 1; }
echo "quickstart: the printed demo operator opens the console"
