/**
 * The site icon, SVG, served at /favicon.svg (the app page links it) and at /favicon.ico, which
 * browsers ask for on pages without a link (the screen and terminal pages), so no page of the
 * service answers a 404 for it. A screen with a cursor, in the app's accent colour.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="2" y="5" width="28" height="19" rx="3" fill="#15171a" stroke="#8ab4f8" stroke-width="2.5"/>
<path d="M8 11l4 3-4 3M14 18h6" fill="none" stroke="#8ab4f8" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/>
<path d="M11 28h10" stroke="#8ab4f8" stroke-width="2.5" stroke-linecap="round"/>
</svg>
`;
