// tokreg serve: small behaviours shared by every page (no build step, no library).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // A select marked data-autosubmit submits its form when changed.
  for (const el of document.querySelectorAll("select[data-autosubmit]")) {
    el.addEventListener("change", () => el.form.submit());
  }
  // A form marked data-post-if-filled="FIELD" is a GET (a link to share) while FIELD is empty,
  // and a POST (no length limit of a URL) once it holds text.
  for (const form of document.querySelectorAll("form[data-post-if-filled]")) {
    form.addEventListener("submit", () => {
      const field = form.elements[form.dataset.postIfFilled];
      const empty = !field.value.trim();
      form.method = empty ? "get" : "post";
      field.disabled = empty;
      const token = form.elements.form_token; // only a POST carries it: it stays out of shared links
      if (token) token.disabled = empty;
    });
  }
  // A button.copy copies the text of the element its data-copy names.
  for (const btn of document.querySelectorAll("button.copy")) {
    btn.addEventListener("click", async () => {
      const src = document.getElementById(btn.dataset.copy);
      try {
        await navigator.clipboard.writeText(src.textContent);
        btn.textContent = "copied";
      } catch (e) {
        const range = document.createRange();
        range.selectNodeContents(src);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        btn.textContent = "selected: press Ctrl-C";
      }
      setTimeout(() => { btn.textContent = "copy"; }, 1500);
    });
  }
});
