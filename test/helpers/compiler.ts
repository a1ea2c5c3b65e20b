// What the compiler tests (test/compiler.test.ts) share: the source files the
// TypeScript compiler parses, once per test process for every program made
// with `sharedHost` (the sources, the Node types and the peers' declarations
// are some thousand files, seconds to parse, and the same in every program),
// and the program of the public API.
import { statSync } from 'node:fs';
import ts from 'typescript';
import { publicApi, type PublicApi } from '../../scripts/public-api.js';

const parsed = new Map<string, { file: ts.SourceFile; mtimeMs: number }>();

/**
 * A compiler host for `options` that hands out a file parsed once for every
 * program asking for it with the same parse settings (re-read when the file
 * changed since, as in watch mode).
 */
export function sharedHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
    if (shouldCreateNewSourceFile) return read(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile);
    const settings = typeof languageVersionOrOptions === 'object' ? languageVersionOrOptions : { languageVersion: languageVersionOrOptions };
    const key = `${fileName}\0${settings.languageVersion}\0${settings.impliedNodeFormat ?? ''}\0${settings.jsDocParsingMode ?? ''}`;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(fileName).mtimeMs;
    } catch {
      return read(fileName, languageVersionOrOptions, onError);
    }
    const hit = parsed.get(key);
    if (hit?.mtimeMs === mtimeMs) return hit.file;
    const file = read(fileName, languageVersionOrOptions, onError);
    if (file) parsed.set(key, { file, mtimeMs });
    return file;
  };
  return host;
}

let api: PublicApi | undefined;

/** The program of the public API (scripts/public-api.ts), built once per test process. */
export function sharedPublicApi(): PublicApi {
  api ??= publicApi({ host: sharedHost });
  return api;
}
