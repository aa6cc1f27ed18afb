import { setupServer } from 'msw/node';

/**
 * The network as the workerd suite sees it: nothing. Every outbound `fetch` (the worker's own, during a `SELF.fetch`,
 * or a test's) goes through Mock Service Worker, and a request no test declared a handler for fails the test instead
 * of reaching a real host. Tests that fake a vendor or a webhook receiver add handlers with `network.use(...)`;
 * they are reset after each test.
 */
export const network = setupServer();
