// Lists what a library's index exports that no code outside the library imports through
// `@app/<lib>`, so each public surface stays as small as its use, and any import that hides its
// use (a whole-library import, a relative path past the index). Run: `npm run exports:unused`
// (one line per finding, exit 1 if any); test/foundation/boundaries/public-surfaces.test.ts pins none.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

/** The folders whose files count as users of a library's public surface. */
const USER_FOLDERS = ['apps', 'libs', 'test', 'bench', 'scripts', 'migrations'];

export interface SurfaceReport {
  /** `libs/<lib>: <name>` for each exported name nothing outside the library imports. */
  unused: string[];
  /** `<file> imports @app/<lib> whole`: a namespace use hides which names it needs. */
  wholeImports: string[];
  /** `<file> reaches past @app/<lib> to <path>`: a relative import of a library's internals. */
  deepImports: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** The names a library's index.ts exports (re-exports and its own declarations). */
function exportedNames(index: string): string[] {
  const names: string[] = [];
  for (const statement of parse(index).statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (clause && ts.isNamedExports(clause))
        names.push(...clause.elements.map((e) => e.name.text));
      continue;
    }
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        if (ts.isIdentifier(d.name)) names.push(d.name.text);
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

/** The module a node imports or re-exports, by any syntax, else undefined. */
function moduleSpecifierOf(node: ts.Node): string | undefined {
  if (
    (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
    node.moduleSpecifier &&
    ts.isStringLiteral(node.moduleSpecifier)
  ) {
    return node.moduleSpecifier.text;
  }
  if (
    ts.isImportTypeNode(node) &&
    ts.isLiteralTypeNode(node.argument) &&
    ts.isStringLiteral(node.argument.literal)
  ) {
    return node.argument.literal.text;
  }
  if (
    ts.isCallExpression(node) &&
    (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
      (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
    node.arguments[0] &&
    ts.isStringLiteral(node.arguments[0])
  ) {
    return node.arguments[0].text;
  }
  return undefined;
}

/**
 * The library names an import or re-export uses (`import { a, b as c }`, `export { a }`,
 * `import('@app/x').A`), or undefined for a whole-module use (`import * as`, a default import,
 * `export *`, `import()`, `require()`, `typeof import()`).
 */
function namedUses(node: ts.Node): string[] | undefined {
  if (ts.isImportDeclaration(node)) {
    const bindings = node.importClause?.namedBindings;
    if (node.importClause?.name || !bindings) return node.importClause ? undefined : [];
    return ts.isNamedImports(bindings)
      ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
      : undefined;
  }
  if (ts.isExportDeclaration(node)) {
    return node.exportClause && ts.isNamedExports(node.exportClause)
      ? node.exportClause.elements.map((e) => (e.propertyName ?? e.name).text)
      : undefined;
  }
  if (ts.isImportTypeNode(node) && node.qualifier && ts.isIdentifier(node.qualifier)) {
    return [node.qualifier.text];
  }
  return undefined;
}

/** `@app/<lib>` -> `<lib>`, else undefined. */
function libOf(specifier: string): string | undefined {
  return specifier.startsWith('@app/') ? specifier.slice(5) : undefined;
}

/** The library folder a file sits in (`libs/<lib>/...`), else undefined. */
function ownLib(root: string, file: string): string | undefined {
  const parts = relative(root, file).split(sep);
  return parts[0] === 'libs' ? parts[1] : undefined;
}

/** Reports every library's exports that no file outside that library imports. */
export function publicSurfaceReport(root: string): SurfaceReport {
  const libs = readdirSync(join(root, 'libs')).filter((lib) =>
    statSync(join(root, 'libs', lib, 'src', 'index.ts'), { throwIfNoEntry: false })?.isFile(),
  );
  const used = new Map(libs.map((lib) => [lib, new Set<string>()]));
  const wholeImports: string[] = [];
  const deepImports: string[] = [];

  for (const folder of USER_FOLDERS) {
    const dir = join(root, folder);
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const file of sourceFiles(dir)) {
      const self = ownLib(root, file);
      const where = relative(root, file);
      const visit = (node: ts.Node): void => {
        const specifier = moduleSpecifierOf(node);
        const lib = specifier === undefined ? undefined : libOf(specifier);
        if (specifier?.startsWith('.')) {
          const target = relative(root, resolve(dirname(file), specifier));
          const into = ownLib(root, join(root, target));
          if (into !== undefined && into !== self) {
            deepImports.push(
              `${where} reaches past @app/${into} to ${target.split(sep).join('/')}`,
            );
          }
        } else if (lib !== undefined && lib !== self) {
          const names = namedUses(node);
          if (names === undefined) wholeImports.push(`${where} imports @app/${lib} whole`);
          else for (const name of names) used.get(lib)?.add(name);
        }
        ts.forEachChild(node, visit);
      };
      visit(parse(file));
    }
  }

  const unused = libs.flatMap((lib) =>
    exportedNames(join(root, 'libs', lib, 'src', 'index.ts'))
      .filter((name) => !used.get(lib)?.has(name))
      .map((name) => `libs/${lib}: ${name}`),
  );
  return { unused, wholeImports, deepImports };
}

if (require.main === module) {
  // Compiled into dist/scripts: the repository root is two levels up.
  const report = publicSurfaceReport(join(__dirname, '..', '..'));
  const lines = [...report.unused, ...report.wholeImports, ...report.deepImports];
  for (const line of lines) console.log(line);
  process.exitCode = lines.length > 0 ? 1 : 0;
}
