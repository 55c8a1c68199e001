/**
 * The code editor of the Publication screen: CodeMirror 6 (https://codemirror.net/docs/), with
 * CSS or JavaScript highlighting, line numbers, undo history and bracket matching. It is a lazy
 * chunk of its own (the first load stays under budget); the language support is loaded on
 * demand too (`import()`), so a CSS customization does not load the JavaScript parser.
 *
 * CSP: CodeMirror's styles (style-mod) go into a `<style>` element when the editor lives in the
 * document, which the console's `style-src 'self'` forbids, and into a constructable stylesheet
 * (`adoptedStyleSheets`, not governed by `style-src`) when it lives in a shadow root. So the
 * editor is mounted in an open shadow root of `parent`; its look comes from `THEME` (the
 * console's stylesheet does not reach into the shadow root), and its description (hint and
 * errors, `describe`) from a hidden element inside the same root, since `aria-describedby`
 * cannot cross the shadow boundary.
 *
 * Keyboard: Tab is left to move focus (no Tab trap, WCAG 2.1.2); indent with the
 * `Mod-]`/`Mod-[` of CodeMirror's default keymap.
 *
 *   const editor = await createEditor(parent, { doc, type: 'css', label: 'data of Dark', description, onChange });
 *   editor.set(text); editor.describe(text); editor.destroy();
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

export interface EditorOptions {
  doc: string;
  type: 'css' | 'js';
  /** The accessible name of the editable area (role textbox). */
  label: string;
  /** The accessible description: the hint and the errors. */
  description: string;
  onChange: (text: string) => void;
}

export interface Editor {
  /** Replaces the text (e.g. after a restore) without calling `onChange`. */
  set(text: string): void;
  /** Replaces the accessible description. */
  describe(text: string): void;
  destroy(): void;
}

const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
/** The editor's look, matching the console's (styles.css variables do not reach the shadow root). */
const THEME = EditorView.theme({
  '&': { backgroundColor: '#fff', color: '#1b1f24', fontSize: '0.9rem', minHeight: '16rem', maxHeight: '32rem' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: MONO, overflow: 'auto' },
  '.cm-content': { minHeight: '16rem' },
  '.cm-gutters': { backgroundColor: '#eef1f4', color: '#57606a', borderRight: '1px solid #d0d7de' },
  '.cm-activeLine': { backgroundColor: '#f3f6fb' },
  '.cm-activeLineGutter': { backgroundColor: '#e2e8f0' },
});
/**
 * Token colours with at least 4.5:1 contrast on the white and active-line backgrounds (WCAG 1.4.3;
 * CodeMirror's default highlight style has lighter ones).
 */
const HIGHLIGHT = HighlightStyle.define([
  { tag: [t.keyword, t.modifier, t.operatorKeyword], color: '#6b21a8' },
  { tag: [t.propertyName, t.attributeName], color: '#1e40af' },
  { tag: [t.number, t.color, t.unit, t.atom, t.bool, t.null], color: '#166534' },
  { tag: [t.string, t.special(t.string), t.regexp], color: '#9a3412' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: '#57606a', fontStyle: 'italic' },
  { tag: [t.className, t.tagName, t.labelName, t.definition(t.variableName), t.function(t.variableName)], color: '#9f1239' },
  { tag: t.invalid, color: '#b42318', textDecoration: 'underline' },
]);
/**
 * Typing over a selection: Chrome's contenteditable editing would carry the replaced text's
 * colour over in a `style` attribute, which the console's CSP blocks (and reports). The editor
 * replaces the selection itself instead, as CodeMirror does for its other commands.
 */
const TYPE_OVER_SELECTION = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== 'insertText' || typeof event.data !== 'string' || view.state.selection.ranges.every((range) => range.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.update(view.state.replaceSelection(event.data), { scrollIntoView: true, userEvent: 'input.type' }));
    return true;
  },
});
let described = 0;

/** An editor of the module's description in a shadow root of `parent` (its styles kept apart from the page's), for `options.type` code. */
export async function createEditor(parent: HTMLElement, options: EditorOptions): Promise<Editor> {
  const language = options.type === 'css' ? (await import('@codemirror/lang-css')).css() : (await import('@codemirror/lang-javascript')).javascript();
  let quiet = false;
  const shadow = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
  const description = document.createElement('div');
  description.id = `editor-description-${++described}`;
  description.hidden = true;
  description.textContent = options.description;
  shadow.replaceChildren(description);
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        lineNumbers(),
        history(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(HIGHLIGHT),
        language,
        keymap.of([...defaultKeymap, ...historyKeymap]),
        EditorView.lineWrapping,
        THEME,
        TYPE_OVER_SELECTION,
        EditorView.contentAttributes.of({ 'aria-label': options.label, 'aria-describedby': description.id }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !quiet) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    set(text) {
      if (text === view.state.doc.toString()) return;
      quiet = true;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
      quiet = false;
    },
    describe(text) {
      description.textContent = text;
    },
    destroy() {
      view.destroy();
      description.remove();
    },
  };
}
