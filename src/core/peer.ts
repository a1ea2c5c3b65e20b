/**
 * Optional peers: vendor packages that an adapter or an integration loads on
 * first use, so that importing it never requires them.
 * @module
 */
import { ConfigurationError, errorMessage } from './errors.js';

const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

/**
 * Load an optional peer package through `importer` (a dynamic `import()`);
 * when the package is not installed, throw a `ConfigurationError` with code
 * `missing_dependency` that names the package to install.
 * @internal
 */
export async function loadPeer<T>(pkg: string, importer: () => Promise<T>, usedBy: string): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && NOT_FOUND.has(code)) {
      throw new ConfigurationError(`${usedBy} needs the optional package "${pkg}": run \`npm install ${pkg}\``, {
        code: 'missing_dependency',
        cause: error,
        details: { package: pkg },
      });
    }
    throw new ConfigurationError(`Could not load "${pkg}" for ${usedBy}: ${errorMessage(error)}`, {
      code: 'missing_dependency',
      cause: error,
      details: { package: pkg },
    });
  }
}
