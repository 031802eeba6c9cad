/**
 * The part of Monaco the app uses: the editor API (with the diff editor, for workflow versions),
 * the editing features a JSON document wants, the JSON language with its worker, and Markdown's
 * colouring (instruction diffs). Importing "monaco-editor" itself would bring ~80 languages, the
 * TypeScript/CSS/HTML services and every contribution: ~6 MB of JavaScript for the playground.
 * Loaded only by load-monaco.ts, in a chunk of its own, after the page has painted.
 */
import "monaco-editor/features/codicon/register";
import "monaco-editor/editor/browser/coreCommands";
import "monaco-editor/editor/browser/widget/codeEditor/codeEditorWidget";
import "monaco-editor/editor/browser/widget/diffEditor/diffEditor.contribution";
import "monaco-editor/editor/contrib/bracketMatching/browser/bracketMatching";
import "monaco-editor/editor/contrib/caretOperations/browser/caretOperations";
import "monaco-editor/editor/contrib/clipboard/browser/clipboard";
import "monaco-editor/editor/contrib/comment/browser/comment";
import "monaco-editor/editor/contrib/contextmenu/browser/contextmenu";
import "monaco-editor/editor/contrib/cursorUndo/browser/cursorUndo";
import "monaco-editor/features/find/register";
import "monaco-editor/editor/contrib/folding/browser/folding";
import "monaco-editor/editor/contrib/format/browser/formatActions";
import "monaco-editor/editor/contrib/gotoError/browser/gotoError";
import "monaco-editor/editor/contrib/hover/browser/hoverContribution";
import "monaco-editor/editor/contrib/indentation/browser/indentation";
import "monaco-editor/editor/contrib/linesOperations/browser/linesOperations";
import "monaco-editor/editor/contrib/multicursor/browser/multicursor";
import "monaco-editor/editor/contrib/readOnlyMessage/browser/contribution";
import "monaco-editor/editor/contrib/smartSelect/browser/smartSelect";
import "monaco-editor/editor/contrib/snippet/browser/snippetController2";
import "monaco-editor/editor/contrib/suggest/browser/suggestController";
import "monaco-editor/editor/contrib/toggleTabFocusMode/browser/toggleTabFocusMode";
import "monaco-editor/editor/contrib/tokenization/browser/tokenization";
import "monaco-editor/editor/contrib/wordHighlighter/browser/wordHighlighter";
import "monaco-editor/editor/contrib/wordOperations/browser/wordOperations";
import "monaco-editor/editor/common/standaloneStrings";
import "monaco-editor/languages/definitions/markdown/register";
import * as editorApi from "monaco-editor/editor/editor.api";
import * as json from "monaco-editor/languages/features/json/register";

/** The editor API with `json` beside it, as the full package's index exports them. */
export const monaco = { ...editorApi, json };
export type SlimMonaco = typeof monaco;
