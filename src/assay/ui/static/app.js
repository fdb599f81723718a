// assay UI: small progressive enhancements. Every page works without this script.
// Text is only ever written with textContent, never as HTML (a queue's next row is the
// server's own escaped page, parsed inertly: its scripts do not run).
"use strict";

let swapped = false; // whether this tab has swapped a queue's page in place

document.addEventListener("DOMContentLoaded", () => {
  enhance();
  listenToKeys();
  // A queue's page swapped in place (below) is a history entry: Back shows the row it names.
  window.addEventListener("popstate", () => { if (swapped) window.location.reload(); });
});

// What each page's elements do; run again when an annotation queue swaps in its next row.
function enhance() {
  // A click anywhere on a table row opens it (the first cell keeps a real link).
  document.querySelectorAll("tr[data-href]").forEach((row) => {
    row.addEventListener("click", (event) => {
      if (event.target.closest("a, input, button, select, label, summary, details.lines")) return;
      if (window.getSelection().toString()) return; // the user is selecting text
      window.location.assign(row.dataset.href);
    });
  });

  // Filter forms apply as soon as a checkbox or select changes; empty fields stay out of the URL.
  document.querySelectorAll("form").forEach((form) => {
    form.addEventListener("submit", () => {
      Array.from(form.elements).forEach((field) => {
        if (!field.name || field.type === "checkbox") return;
        // A threshold at its default stays out of the URL; an emptied one means "none".
        if (field.dataset.default !== undefined) field.disabled = field.value === field.dataset.default;
        else if (field.value === "") field.disabled = true;
      });
    });
  });
  document.querySelectorAll("form[data-autosubmit]").forEach((form) => {
    form.querySelectorAll("select, input[type=checkbox]").forEach((field) => {
      field.addEventListener("change", () => form.requestSubmit());
    });
  });

  // Setting a metric's failing threshold shows the failing rows by it.
  document.querySelectorAll("input[data-threshold]").forEach((field) => {
    field.addEventListener("change", () => {
      const form = field.form;
      const failed = form && form.querySelector("#filter-failed");
      if (failed) failed.checked = true;
      if (form) form.requestSubmit();
    });
  });

  // Compare buttons wait for two experiments; the first one checked is the baseline.
  document.querySelectorAll("form[data-compare-form]").forEach((form) => {
    const button = form.querySelector("[data-compare-button]");
    const boxes = Array.from(form.querySelectorAll("input[type=checkbox][name=e]"));
    const order = boxes.filter((box) => box.checked).map((box) => box.value); // restored by Back
    const refresh = () => { if (button) button.disabled = order.length < 2; };
    boxes.forEach((box) => box.addEventListener("change", () => {
      const at = order.indexOf(box.value);
      if (box.checked && at < 0) order.push(box.value);
      if (!box.checked && at >= 0) order.splice(at, 1);
      refresh();
    }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const query = new URLSearchParams(order.map((id) => ["e", id]));
      window.location.assign(form.action + "?" + query.toString());
    });
    refresh();
  });

  // An upload form reads a picked file into its text box (the box also takes a paste).
  document.querySelectorAll("form[data-upload]").forEach((form) => {
    const picker = form.querySelector("#upload-file");
    if (!picker) return;
    picker.addEventListener("change", async () => {
      const file = picker.files && picker.files[0];
      if (!file) return;
      const suffix = file.name.split(".").pop().toLowerCase();
      if (["jsonl", "json", "csv"].includes(suffix)) form.querySelector("#upload-format").value = suffix;
      form.querySelector("#upload-filename").value = file.name;
      form.querySelector("#upload-content").value = await file.text();
    });
  });

  // Times are stored in UTC; show them in the reader's time zone.
  document.querySelectorAll("time[datetime]").forEach((node) => {
    const when = new Date(node.getAttribute("datetime"));
    if (!Number.isNaN(when.getTime())) {
      node.title = node.getAttribute("datetime");
      node.textContent = when.toLocaleString();
    }
  });

  // An annotation queue saves in place: the same POST a plain form makes, its redirect
  // followed by fetch, and the next row's page swapped in without a full page load.
  const queueForm = document.querySelector("[data-queue] form#annotate");
  if (queueForm) {
    queueForm.addEventListener("submit", (event) => {
      if (event.defaultPrevented || queueForm.dataset.plain) return;
      event.preventDefault();
      saveInPlace(queueForm, event.submitter);
    });
  }
}

async function saveInPlace(form, submitter) {
  const body = new URLSearchParams(new FormData(form, submitter));
  form.querySelectorAll("button").forEach((button) => { button.disabled = true; });
  let response;
  try {
    response = await fetch(form.action, { method: "POST", body, credentials: "same-origin" });
  } catch (error) {
    // The request did not complete: let the browser submit it and show what happens.
    form.querySelectorAll("button").forEach((button) => { button.disabled = false; });
    form.dataset.plain = "1";
    form.requestSubmit(submitter);
    return;
  }
  const page = new DOMParser().parseFromString(await response.text(), "text/html");
  document.title = page.title;
  document.body.replaceWith(document.adoptNode(page.body));
  // A refusal (a stale token, a bad value) shows the server's message where the row was.
  if (response.ok && response.redirected) {
    window.history.pushState(null, "", response.url);
    swapped = true;
  }
  window.scrollTo(0, 0);
  enhance();
}

// Keys act on the page shown at the moment they are pressed (a queue swaps its pages).
function listenToKeys() {
  // Left and right arrows (or j and k) walk through rows and pages.
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || event.metaKey || event.ctrlKey || event.altKey) return;
    const rel = { ArrowLeft: "prev", k: "prev", ArrowRight: "next", j: "next" }[event.key];
    const link = rel && document.querySelector(`a[rel=${rel}]`);
    if (link) window.location.assign(link.href);
  });

  // In an annotation queue, 1-9 pick a choice of the first feedback key and save, s skips.
  document.addEventListener("keydown", (event) => {
    const queueForm = document.querySelector("[data-queue] form#annotate");
    if (!queueForm || event.repeat) return;
    if (event.target.closest("input, select, textarea") || event.metaKey || event.ctrlKey || event.altKey) return;
    if (queueForm.querySelector("button:disabled")) return; // a save is under way
    if (event.key === "s") {
      const skip = queueForm.querySelector("#skip-row");
      if (skip) { event.preventDefault(); skip.click(); }
      return;
    }
    if (!/^[1-9]$/.test(event.key)) return;
    const first = queueForm.querySelector("fieldset.feedback-key");
    const choice = first && first.querySelectorAll("input[type=radio]")[Number(event.key) - 1];
    if (!choice) return;
    event.preventDefault();
    choice.checked = true;
    queueForm.requestSubmit();
  });
}
