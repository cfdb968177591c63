// Status line and error box shared by the pages. `ui` needs `status` and `error` elements.
// document.body.dataset.state is what automation waits on.

/** Sets the page state (and the status text, if given). */
export function setState(ui, state, message) {
  document.body.dataset.state = state;
  if (message !== undefined) ui.status.textContent = message;
}

/** Shows an error, with its `code` when it has one (ChunkwiseError). */
export function showError(ui, err) {
  const code = err && err.code ? err.code : "";
  const msg = err && err.message ? err.message : String(err);
  ui.error.hidden = false;
  ui.error.dataset.code = code;
  ui.error.textContent = code ? `${code}: ${msg}` : msg;
}

/** Hides the error box. */
export function clearError(ui) {
  ui.error.hidden = true;
  ui.error.textContent = "";
  delete ui.error.dataset.code;
}
