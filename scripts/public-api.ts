// The public API as the compiler sees it: every entry point
// (scripts/entry-points.ts) and its exported names, and the functions and
// constructors among them that take an options object. Read by
// scripts/public-names.ts and by the tests of options and names
// (test/options/, test/conventions.compile.ts, through test/compiler.test.ts).
import ts from 'typescript';
import { adapters, entryPoints } from './entry-points.js';

/** A program over every entry point, with its checker. */
export interface PublicApi {
  program: ts.Program;
  checker: ts.TypeChecker;
  /** Entry point (as imported) → its exported symbols, sorted by name. */
  entries: Map<string, ts.Symbol[]>;
}

/**
 * Build the program of the public API (a few seconds). `host` makes the
 * compiler host for the program's options (the tests share parsed files
 * between their programs).
 */
export function publicApi(options: { host?: (compilerOptions: ts.CompilerOptions) => ts.CompilerHost } = {}): PublicApi {
  const files = new Map<string, string>();
  for (const [subpath, source] of Object.entries(entryPoints)) files.set(subpath === '.' ? 'troupe' : `troupe/${subpath}`, source);
  for (const name of adapters) files.set(`troupe/adapters/${name}`, `src/adapters/${name}.ts`);
  const config = ts.getParsedCommandLineOfConfigFile('tsconfig.build.json', {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('tsconfig.build.json could not be read');
  const compilerOptions = { ...config.options, noEmit: true };
  const program = ts.createProgram([...files.values()], compilerOptions, options.host?.(compilerOptions));
  const checker = program.getTypeChecker();
  const entries = new Map<string, ts.Symbol[]>();
  for (const [name, file] of files) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${file} has no module symbol`);
    entries.set(name, [...checker.getExportsOfModule(symbol)].sort((a, b) => a.getName().localeCompare(b.getName())));
  }
  return { program, checker, entries };
}

/** The value behind an exported symbol (through `export { x } from`). */
function resolved(api: PublicApi, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? api.checker.getAliasedSymbol(symbol) : symbol;
}

/**
 * Exported functions and classes whose call or construction takes an
 * options object: a parameter named `options`, or typed by an interface or
 * alias whose name ends in `Options`. Names are unique across entry points
 * (one function exported from two is one function).
 */
export function functionsTakingOptions(api: PublicApi): Map<string, { entry: string; kind: 'function' | 'class' }> {
  const found = new Map<string, { entry: string; kind: 'function' | 'class' }>();
  for (const [entry, symbols] of api.entries) {
    for (const exported of symbols) {
      const symbol = resolved(api, exported);
      const name = exported.getName();
      if (found.has(name)) continue;
      const isClass = (symbol.flags & ts.SymbolFlags.Class) !== 0;
      const isFunction = (symbol.flags & ts.SymbolFlags.Function) !== 0;
      if (!isClass && !isFunction) continue;
      const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
      if (!declaration) continue;
      const type = api.checker.getTypeOfSymbolAtLocation(symbol, declaration);
      const signatures = isClass ? type.getConstructSignatures() : type.getCallSignatures();
      const takesOptions = signatures.some((signature) =>
        signature.getParameters().some((parameter) => {
          if (parameter.getName() === 'options') return true;
          const parameterType = api.checker.getTypeOfSymbolAtLocation(parameter, declaration);
          const typeName = (parameterType.aliasSymbol ?? parameterType.getSymbol())?.getName() ?? '';
          return /Options$/.test(typeName);
        }),
      );
      if (takesOptions) found.set(name, { entry, kind: isClass ? 'class' : 'function' });
    }
  }
  return found;
}
