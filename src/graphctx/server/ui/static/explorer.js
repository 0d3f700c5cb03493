// graphctx evidence explorer: small progressive enhancements only. Every feature works
// without this file: the search is a plain GET form and the state lives in the URL.
"use strict";

// The URL is the state: when history brings a page back, the browser would restore what was
// last typed into the form, which may belong to a later search. Reset the controls to the
// values the server rendered from this page's URL.
window.addEventListener("pageshow", () => {
  for (const form of document.querySelectorAll("form.search")) {
    form.reset();
  }
});

document.addEventListener("DOMContentLoaded", () => {
  const copy = document.getElementById("copy-link");
  if (copy && navigator.clipboard) {
    copy.hidden = false;
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(window.location.href);
        copy.textContent = "Link copied";
      } catch {
        copy.textContent = "Copy failed";
      }
    });
  }

  // "/" jumps to the query box, as on most search pages (not while typing elsewhere).
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    const query = document.getElementById("query");
    if (event.key === "/" && !typing && query) {
      event.preventDefault();
      query.focus();
      query.select();
    }
  });

  // After a search, keyboard and screen-reader users start at the results ("/" goes back to
  // the query box). A fresh page without a query keeps the query box's autofocus.
  const results = document.getElementById("results-h") || document.getElementById("compare-h");
  if (results && !window.location.hash) {
    results.setAttribute("tabindex", "-1");
    results.focus({ preventScroll: true });
  }
});
