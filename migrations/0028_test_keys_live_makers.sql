-- Test mode: a test key made by a live key dies with it. A test key lives in the sandbox, its live maker in the live
-- database, and their ids are two sequences (the same number can name a live key and a test key), so the sandbox's
-- `created_by_key_id` and `ancestry` name sandbox keys only. `live_ancestry` (sandbox rows only; NULL on live, and
-- for a test key made by a dashboard session or by another test key) is the path of the LIVE keys above it, root
-- first, as '/<live id>/<live id>/': the live maker's own ancestry and the maker itself. Revoking a live key revokes,
-- in the sandbox, every test key whose live_ancestry names it and every test key made from those; the scheduled run
-- sweeps the test keys whose live makers are revoked or gone, as a backstop.
ALTER TABLE api_keys ADD COLUMN live_ancestry TEXT CHECK (live_ancestry IS NULL OR live_ancestry GLOB '/?*/');
