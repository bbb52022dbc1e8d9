// The playground: posts the text and the picked versions to /api/encode and draws the answer.
// Everything from the server is put in the page as text (textContent), never as markup.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let seq = 0;
  let timer = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function picked() {
    return [...document.querySelectorAll("select.pg-version")].map((s) => s.value).filter((v) => v);
  }

  function saveUrl(text, refs, special) {
    const q = new URLSearchParams();
    for (const r of refs) q.append("v", r);
    if (special) q.set("allow_special", "true");
    if (text.length <= 2000) q.set("text", text);
    history.replaceState(null, "", "/playground?" + q.toString());
  }

  function tip(t) {
    const lines = ["id " + t.id, "bytes " + (t.bytes.match(/../g) || []).join(" ")];
    lines.push(t.start === undefined ? "span: n/a (this version does not keep the text's bytes)" : "span [" + t.start + ", " + t.end + ") of the input");
    if (t.partial) lines.push("not UTF-8 on its own: part of a character");
    if (t.disagree) lines.push("the versions cut this stretch differently");
    return lines.join("\n");
  }

  // The token at index k of a version: its id, what /api/encode sends once per distinct id
  // (bytes, segments, partial), its byte span when the version keeps the text's bytes, and
  // whether the versions cut its stretch differently.
  function token(v, k, marked) {
    const id = v.ids[k];
    const t = Object.assign({ id: id }, v.pieces[String(id)]);
    if (v.ends) {
      t.start = k ? v.ends[k - 1] : 0;
      t.end = v.ends[k];
    }
    t.disagree = marked[k] === 1;
    return t;
  }

  function drawColumn(v) {
    const col = el("section", "pg-col");
    const h = el("h3");
    const a = el("a", "", v.ref);
    a.href = "/v/" + encodeURIComponent(v.ref).replace("%40", "@");
    h.append(a, el("span", "muted", v.title));
    if (!v.lossless) h.append(el("span", "badge lossy", "lossy"));
    col.append(h);
    col.append(el("div", "meta", v.count.toLocaleString() + " tokens" + (v.exact_spans ? "" : " · byte spans n/a: this version normalizes the text")));
    const toks = el("div", "pg-tokens");
    const ids = el("div", "ids pg-ids");
    const chips = document.createDocumentFragment();
    const idList = document.createDocumentFragment();
    const marked = new Uint8Array(v.ids.length);
    for (const [first, last] of v.disagree) marked.fill(1, first, last);
    v.ids.forEach((id, k) => {
      const t = token(v, k, marked);
      const colour = "c" + (k % 8);
      const chip = el("span", "chip " + colour + (t.partial ? " partial" : "") + (t.disagree ? " disagree" : ""));
      let newline = false;
      if (t.segments.length === 0) chip.append(el("span", "c", "∅"));
      else if (t.segments.length === 1 && t.segments[0][0] === "t") chip.textContent = t.segments[0][1]; // most tokens: plain text, one node
      else {
        for (const [cls, s] of t.segments) {
          chip.append(el("span", cls, s));
          if (cls === "ws" && s.includes("↵")) newline = true;
        }
      }
      const idEl = el("span", colour, String(id));
      chip._token = t; // the tooltip is written on hover, not for every token up front
      chip._peer = idEl;
      idEl._peer = chip;
      chips.append(chip);
      if (newline) chips.append(el("br"));
      idList.append(idEl, " ");
    });
    toks.append(chips);
    ids.append(idList);
    col.append(toks, ids);
    return col;
  }

  function draw(data) {
    const cols = $("pg-cols");
    cols.replaceChildren(...data.versions.map(drawColumn));
    const n = data.disagreements.length;
    $("pg-stats").textContent =
      data.text.characters.toLocaleString() + " characters · " + data.text.bytes.toLocaleString() + " bytes" +
      (data.versions.length > 1 ? " · " + n + " stretch" + (n === 1 ? "" : "es") + " cut differently" : "");
  }

  async function run() {
    const text = $("pg-text").value;
    const refs = picked();
    const special = $("pg-special").checked;
    saveUrl(text, refs, special);
    const mine = ++seq;
    if (refs.length === 0) {
      $("pg-cols").replaceChildren();
      $("pg-stats").textContent = "";
      return;
    }
    let res, data;
    try {
      res = await fetch("/api/encode", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: text, versions: refs, allow_special: special }),
      });
      data = await res.json();
    } catch (e) {
      data = { error: "the server did not answer (" + e + ")" };
    }
    if (mine !== seq) return; // a newer request is on its way
    const err = $("pg-error");
    if (!res || !res.ok) {
      err.textContent = data.error || "error " + (res && res.status);
      err.hidden = false;
      return;
    }
    err.hidden = true;
    draw(data);
    document.body.dataset.encoded = String(mine); // lets tests wait for a finished draw
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("pg-text").addEventListener("input", later);
    for (const s of document.querySelectorAll("select.pg-version")) s.addEventListener("change", run);
    $("pg-special").addEventListener("change", run);
    $("pg").addEventListener("submit", (e) => { e.preventDefault(); run(); });

    const box = el("div", "pg-tip");
    box.hidden = true;
    document.body.append(box);
    const cols = $("pg-cols");
    cols.addEventListener("mouseover", (e) => {
      const t = e.target.closest(".chip, .ids span");
      if (!t || !t._peer) return;
      const chip = t.classList.contains("chip") ? t : t._peer;
      chip.classList.add("hot");
      chip._peer.classList.add("hot");
      box.textContent = tip(chip._token);
      box.hidden = false;
    });
    cols.addEventListener("mousemove", (e) => {
      box.style.left = Math.min(e.clientX + 14, window.innerWidth - box.offsetWidth - 8) + "px";
      box.style.top = e.clientY + 16 + "px";
    });
    cols.addEventListener("mouseout", (e) => {
      const t = e.target.closest(".chip, .ids span");
      if (!t || !t._peer) return;
      t.classList.remove("hot");
      t._peer.classList.remove("hot");
      box.hidden = true;
    });
    run();
  });
})();
