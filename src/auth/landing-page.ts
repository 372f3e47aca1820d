/**
 * The small HTML page an OpenID Connect provider sends the browser back to: on success it moves on
 * to the app at once (a meta refresh), on failure it says why, with a link to sign in again.
 */
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function landingPage(options: { title: string; message: string; next: string; moveOn: boolean }): string {
  const next = escape(options.next);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${
    options.moveOn ? `<meta http-equiv="refresh" content="0;url=${next}">` : ''}<title>${escape(options.title)}</title></head>` +
    `<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 10vh auto; padding: 0 1rem">` +
    `<h1>${escape(options.title)}</h1><p>${escape(options.message)}</p><p><a href="${next}">${options.moveOn ? 'Continue' : 'Back to sign-in'}</a></p></body></html>`;
}
