// The join link to share, and whether friends on other machines can open it. The server
// builds the link from its public URL (--public-url, else the address it listens on, or this
// machine's network address when it listens on every address). A link to this computer
// (127.0.0.1, localhost, ::1) opens nowhere else: if this page was reached by another name,
// that name is the better link (a reverse proxy, a server behind a forwarded port); if not,
// the room says how to let friends in (README, "Run it").
import { h } from "./util.js";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|::1)$/i;
export const isLoopback = (hostname) => LOOPBACK.test(hostname);

/**
 * The link to share for `link` (the room's), seen from the page at `here` (a URL or
 * location): `{url, local}`, local when only this computer can open it.
 */
export function shareableLink(link, here = location) {
  let url;
  try {
    url = new URL(link);
  } catch {
    return { url: link, local: false };
  }
  if (!isLoopback(url.hostname)) return { url: link, local: false };
  const page = new URL(here.href ?? here);
  if (isLoopback(page.hostname)) return { url: link, local: true };
  return { url: `${page.origin}${url.pathname}`, local: false };
}

/** What the room says under a link only this computer can open (nodes, for replaceChildren). */
export const localNotice = () => [
  "Only this computer can open this link: the server listens here alone. To race friends on other machines, " +
    "restart it with ",
  h("code", {}, "--host 0.0.0.0"),
  " (and ",
  h("code", {}, "--public-url"),
  " with the address they reach it at, if the link does not show it): see “Run it” in the README.",
];
