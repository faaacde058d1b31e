// Narration quotes source in backticks ("`a * b` multiplies a and b"): shown as <code>, built
// node by node (never innerHTML), so whatever the snippet's names hold stays text.

// The text's parts as nodes: text, then each `quoted` part as a <code>. Unbalanced backticks
// are left as they are.
export function withCode(text, doc = document) {
  const parts = text.split("`");
  if (parts.length % 2 === 0) return [doc.createTextNode(text)];
  return parts
    .map((part, i) => {
      if (i % 2 === 0) return part ? doc.createTextNode(part) : null;
      const code = doc.createElement("code");
      code.textContent = part;
      return code;
    })
    .filter(Boolean);
}

// The text without its backticks (for an accessible value, which cannot hold markup).
export function plain(text) {
  return text.split("`").length % 2 === 1 ? text.replaceAll("`", "") : text;
}
