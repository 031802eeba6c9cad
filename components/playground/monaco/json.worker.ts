import "monaco-editor/languages/features/json/json.worker";
