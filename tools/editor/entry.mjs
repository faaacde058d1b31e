// What static/editor.js uses of CodeMirror 6, and nothing else: esbuild keeps only these.
export { EditorState, StateEffect, StateField } from "@codemirror/state";
export { Decoration, EditorView, keymap, lineNumbers, drawSelection, highlightActiveLine, WidgetType } from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { HighlightStyle, syntaxHighlighting, indentUnit } from "@codemirror/language";
export { pythonLanguage } from "@codemirror/lang-python";
export { tags } from "@lezer/highlight";
