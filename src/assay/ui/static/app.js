// assay UI: small progressive enhancements. Every page works without this script.
// Text is only ever written with textContent, never as HTML.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // A click anywhere on a table row opens it (the first cell keeps a real link).
  document.querySelectorAll("tr[data-href]").forEach((row) => {
    row.addEventListener("click", (event) => {
      if (event.target.closest("a, input, button, select, label")) return;
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

  // Left and right arrows (or j and k) walk through rows and pages.
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || event.metaKey || event.ctrlKey || event.altKey) return;
    const rel = { ArrowLeft: "prev", k: "prev", ArrowRight: "next", j: "next" }[event.key];
    const link = rel && document.querySelector(`a[rel=${rel}]`);
    if (link) window.location.assign(link.href);
  });

  // In an annotation queue, 1-9 pick a choice of the first feedback key and save, s skips.
  const queueForm = document.querySelector("[data-queue] form#annotate");
  if (queueForm) {
    document.addEventListener("keydown", (event) => {
      if (event.target.closest("input, select, textarea") || event.metaKey || event.ctrlKey || event.altKey) return;
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
});
