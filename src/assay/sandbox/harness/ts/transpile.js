'use strict';
// The TypeScript compile step: strip the types with the typescript package's own
// transpiler (syntax errors are reported; types are not checked, as with tsx or esbuild).
const MAX_LINES = 20;

function transpiler(typescriptPath) {
  let ts = null;
  return function transpile(code, fileName) {
    if (ts === null) ts = require(typescriptPath);
    const result = ts.transpileModule(code, {
      fileName,
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, sourceMap: false },
    });
    const errors = (result.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      const lines = errors.slice(0, MAX_LINES).map((d) => {
        const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
        if (!d.file || d.start === undefined) return `error TS${d.code}: ${text}`;
        const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
        return `${fileName}(${line + 1},${character + 1}): error TS${d.code}: ${text}`;
      });
      return { error: { kind: 'compile', error_type: 'CompileError', message: lines.join('\n'), traceback: '' } };
    }
    return { code: result.outputText };
  };
}

module.exports = { transpiler };
