// Lists what a library's index exports that no code outside the library imports through
// `@app/<lib>`, so each public surface stays as small as its use. Run: `npm run exports:unused`
// (prints `libs/<lib>: <name>` per unused export, exits 1 if any); test/foundation pins it at none.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';

/** The folders whose files count as users of a library's public surface. */
const USER_FOLDERS = ['apps', 'libs', 'test', 'bench', 'scripts'];

export interface SurfaceReport {
  /** `libs/<lib>: <name>` for each exported name nothing outside the library imports. */
  unused: string[];
  /** `<file> imports @app/<lib> whole`: a namespace use hides which names it needs. */
  wholeImports: string[];
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

  for (const folder of USER_FOLDERS) {
    const dir = join(root, folder);
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const file of sourceFiles(dir)) {
      const self = ownLib(root, file);
      const where = relative(root, file);
      const visit = (node: ts.Node): void => {
        if (
          (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
          node.moduleSpecifier &&
          ts.isStringLiteral(node.moduleSpecifier)
        ) {
          const lib = libOf(node.moduleSpecifier.text);
          if (lib !== undefined && lib !== self) {
            const names = used.get(lib) ?? new Set<string>();
            used.set(lib, names);
            if (ts.isImportDeclaration(node)) {
              const bindings = node.importClause?.namedBindings;
              if (bindings && ts.isNamedImports(bindings)) {
                for (const e of bindings.elements) names.add((e.propertyName ?? e.name).text);
              } else if (node.importClause?.name || bindings) {
                wholeImports.push(`${where} imports @app/${lib} whole`);
              }
            } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
              for (const e of node.exportClause.elements) {
                names.add((e.propertyName ?? e.name).text);
              }
            } else {
              wholeImports.push(`${where} imports @app/${lib} whole`);
            }
          }
        } else if (
          ts.isImportTypeNode(node) &&
          ts.isLiteralTypeNode(node.argument) &&
          ts.isStringLiteral(node.argument.literal)
        ) {
          const lib = libOf(node.argument.literal.text);
          if (lib !== undefined && lib !== self) {
            if (node.qualifier && ts.isIdentifier(node.qualifier)) {
              used.get(lib)?.add(node.qualifier.text);
            } else wholeImports.push(`${where} imports @app/${lib} whole`);
          }
        } else if (
          ts.isCallExpression(node) &&
          (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
            (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
          node.arguments[0] &&
          ts.isStringLiteral(node.arguments[0])
        ) {
          const lib = libOf(node.arguments[0].text);
          if (lib !== undefined && lib !== self)
            wholeImports.push(`${where} imports @app/${lib} whole`);
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
  return { unused, wholeImports };
}

if (require.main === module) {
  // Compiled into dist/scripts: the repository root is two levels up.
  const report = publicSurfaceReport(join(__dirname, '..', '..'));
  for (const line of [...report.unused, ...report.wholeImports]) console.log(line);
  process.exitCode = report.unused.length + report.wholeImports.length > 0 ? 1 : 0;
}
