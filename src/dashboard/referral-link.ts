import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import type { AppEnv } from '../env';
import { canonicalCode, REFERRAL_CODE, REFERRAL_COOKIE, REFERRAL_COOKIE_DAYS } from '../services/referrals/codes';

// A referrer's link: /r/<code> remembers the code in a first-party cookie for 30 days and opens the shop. It reads
// nothing (no round trip): a code nobody has is only found out at sign-up, where a code from the cookie records nothing.

export const referralLinkRouter = new Hono<AppEnv>().get('/r/:code', (c) => {
  const code = c.req.param('code');
  if (REFERRAL_CODE.test(code)) {
    setCookie(c, REFERRAL_COOKIE, canonicalCode(code), {
      path: '/',
      httpOnly: true,
      secure: true,
      sameSite: 'Lax',
      maxAge: REFERRAL_COOKIE_DAYS * 24 * 3600,
    });
  }
  c.header('Cache-Control', 'no-store');
  return c.redirect('/shop', 302);
});
