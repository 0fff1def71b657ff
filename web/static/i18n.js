// Texts of the page in English and German: its own labels only, each
// language in a file of its own (i18n/en.js, i18n/de.js) with the same
// keys. The page picks the browser's language (German for any "de-*",
// English otherwise) and lets the reader switch. "{name}" marks a value
// the page fills in.
//
// Every sentence the service says (reasons, notes, pasted lines, how a
// query was read, blockers, next steps, history, changes, plan labels)
// comes said in the page's language in the service's answers. The names
// of error codes and document types come from the service's message
// catalog, /static/messages.json, merged in below before the page starts
// (textsReady); see docs/messages.md.

import { de } from "./i18n/de.js";
import { en } from "./i18n/en.js";

export const texts = { en, de };

export const textsReady = fetch("/static/messages.json", { credentials: "omit", referrerPolicy: "no-referrer" })
  .then((resp) => (resp.ok ? resp.json() : {}))
  .then((catalog) => {
    for (const lang of Object.keys(texts)) {
      Object.assign(texts[lang], catalog[lang] || {});
    }
  })
  .catch(() => {
    // Without the catalog the page still works: an error shows the
    // service's own sentence.
  });
