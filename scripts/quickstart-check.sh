#!/usr/bin/env bash
# Checks the README quickstart on this checkout: `npm run dev` migrates, seeds, prints a demo key and serves,
# and the key buys something. Run by .ci/run; safe to run by hand (uses its own port, stops the server after).
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${QUICKSTART_PORT:-8799}"
LOG="$(mktemp)"
# Its own process group, so stopping it also stops wrangler's workerd child.
PORT="$PORT" setsid npm run dev >"$LOG" 2>&1 &
DEV_PID=$!
stop_dev() {
  kill -TERM -- "-$DEV_PID" 2>/dev/null || true
  sleep 2
  kill -KILL -- "-$DEV_PID" 2>/dev/null || true
}
trap stop_dev EXIT

for _ in $(seq 1 120); do
  grep -q "Demo API key" "$LOG" && grep -q "Ready on" "$LOG" && break
  if ! kill -0 "$DEV_PID" 2>/dev/null; then cat "$LOG"; echo "quickstart: npm run dev exited early"; exit 1; fi
  sleep 1
done
KEY="$(sed -n 's/.*Demo API key: *\(sk_live_[0-9A-Za-z]*\).*/\1/p' "$LOG" | head -1)"
if [ -z "$KEY" ]; then cat "$LOG"; echo "quickstart: no demo API key printed"; exit 1; fi

BASE="http://localhost:$PORT/api/v2"
curl -fsS "$BASE/stock" >/dev/null
curl -fsS -H "X-API-Key: $KEY" "$BASE/wallet/balance" | grep -q '"currency":"USD"'
curl -fsS -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d '{"product_id":2,"quantity":1}' "$BASE/orders" | grep -q '"stock_items"'
echo "quickstart: npm run dev served the demo key, stock, balance and a purchase"
