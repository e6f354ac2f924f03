// Rewrites a JavaScript file's non-ASCII characters as escapes of the same meaning, so the
// bundles scripts/bundle-apps.ts makes are ASCII and the app loader can read them as Latin-1.
// Why it matters: V8 keeps a script's source for the functions it compiles later, and one
// character above U+00FF makes the whole string two bytes a character. The poller's 8 MB bundle
// was 16 MB of every poller's heap for a few locale regexes, and decoding it as UTF-8 took 73 ms
// of a start on Node 20 against 29 ms as Latin-1 (docs/operations.md, "Process start and the
// code cache"). esbuild already escapes strings and templates; it leaves regular-expression
// literals and tagged templates as written, which is what this handles.
import * as ts from 'typescript';

/** ECMAScript's line terminators beyond ASCII: LINE SEPARATOR and PARAGRAPH SEPARATOR. */
const LINE_TERMINATORS = new Set([0x2028, 0x2029]);

/**
 * `text` with every non-ASCII character written as an escape, or undefined when one cannot be
 * rewritten without changing what the program does (the file then stays as it is):
 *
 * - in a string, a regular-expression literal or an untagged template, a UTF-16 escape of each
 *   code unit (`\u00e9`), which reads as the character (in a `u` regex a surrogate pair's two
 *   escapes read as one code point); an identity escape (`\é`) becomes that escape too;
 * - in an identifier, `\u{…}` of the code point, which names the same binding or property;
 * - between tokens (comments and whitespace), an escape in a comment's text, a space for
 *   whitespace, a line feed for a line terminator.
 *
 * Left alone (undefined): a tagged template (its tag can read the raw text), a backslash before a
 * line terminator in a literal (a line continuation), text TypeScript's parser reports errors in.
 */
export function escapeNonAscii(text: string, fileName: string): string | undefined {
  const source = parseJs(text, fileName);
  if (parseErrors(source) > 0) return undefined;
  const tokens = leaves(source)
    .filter((node) => node.kind !== ts.SyntaxKind.EndOfFileToken)
    .map((node) => ({
      start: node.getStart(source),
      end: node.end,
      kind: node.kind,
      tagged: isTaggedTemplatePart(node),
    }));

  let out = '';
  let copiedTo = 0;
  let next = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    while (next < tokens.length && tokens[next].end <= i) next++;
    const token = tokens[next] && tokens[next].start <= i ? tokens[next] : undefined;
    let from = i;
    let replacement: string;
    if (!token) {
      replacement = betweenTokens(text, i);
      if (isSurrogatePair(text, i)) i++;
    } else if (
      token.kind === ts.SyntaxKind.Identifier ||
      token.kind === ts.SyntaxKind.PrivateIdentifier
    ) {
      const point = text.codePointAt(i)!;
      replacement = `\\u{${point.toString(16)}}`;
      if (point > 0xffff) i++;
    } else if (isLiteral(token.kind) && !token.tagged) {
      if (precededByOddBackslashes(text, i, token.start)) {
        if (LINE_TERMINATORS.has(unit)) return undefined;
        from = i - 1;
      }
      replacement = unitEscape(unit);
    } else {
      return undefined;
    }
    out += text.slice(copiedTo, from) + replacement;
    copiedTo = i + 1;
  }
  if (copiedTo === 0) return text;
  const escaped = out + text.slice(copiedTo);
  return sameTokens(source, escaped, fileName) ? escaped : undefined;
}

/** A comment's or whitespace's non-ASCII character: kept in meaning, written in ASCII. */
function betweenTokens(text: string, i: number): string {
  const unit = text.charCodeAt(i);
  if (LINE_TERMINATORS.has(unit)) return '\n';
  if (/\s/u.test(text[i])) return ' ';
  const point = text.codePointAt(i)!;
  return `\\u{${point.toString(16)}}`;
}

function unitEscape(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, '0')}`;
}

function isSurrogatePair(text: string, i: number): boolean {
  return (text.codePointAt(i) ?? 0) > 0xffff;
}

function precededByOddBackslashes(text: string, i: number, tokenStart: number): boolean {
  let count = 0;
  for (let j = i - 1; j >= tokenStart && text.charCodeAt(j) === 0x5c; j--) count++;
  return count % 2 === 1;
}

function isLiteral(kind: ts.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.StringLiteral ||
    kind === ts.SyntaxKind.RegularExpressionLiteral ||
    kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
    kind === ts.SyntaxKind.TemplateHead ||
    kind === ts.SyntaxKind.TemplateMiddle ||
    kind === ts.SyntaxKind.TemplateTail
  );
}

/** A template part whose template is a tag's argument: the tag may read its raw text. */
function isTaggedTemplatePart(node: ts.Node): boolean {
  let parent = node.parent;
  while (
    parent &&
    (parent.kind === ts.SyntaxKind.TemplateSpan || parent.kind === ts.SyntaxKind.TemplateExpression)
  ) {
    parent = parent.parent;
  }
  return parent?.kind === ts.SyntaxKind.TaggedTemplateExpression && isLiteral(node.kind);
}

function parseErrors(source: ts.SourceFile): number {
  return (source as unknown as { parseDiagnostics: readonly unknown[] }).parseDiagnostics.length;
}

/**
 * The check that the rewrite changed nothing but spelling: the escaped text parses without
 * errors into the same tokens, strings and templates with the same values, identifiers with the
 * same names (regular expressions are compared by kind only).
 */
function sameTokens(before: ts.SourceFile, escapedText: string, fileName: string): boolean {
  const after = parseJs(escapedText, fileName);
  if (parseErrors(after) > 0) return false;
  const left = leaves(before);
  const right = leaves(after);
  if (left.length !== right.length) return false;
  return left.every((node, i) => {
    const other = right[i];
    if (node.kind !== other.kind) return false;
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteral(node)) {
      return node.text === (other as typeof node).text;
    }
    if (ts.isTemplateLiteralToken(node)) return node.text === (other as typeof node).text;
    return true;
  });
}

/** A JavaScript file's syntax tree, parents set, JSDoc comments left as comments. */
function parseJs(text: string, fileName: string): ts.SourceFile {
  return ts.createSourceFile(
    fileName,
    text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    true,
    ts.ScriptKind.JS,
  );
}

/** The tree's leaves in source order: its tokens, literals and identifiers. */
function leaves(source: ts.SourceFile): ts.Node[] {
  const found: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    const children = node.getChildren(source);
    if (children.length === 0) found.push(node);
    else for (const child of children) visit(child);
  };
  visit(source);
  return found;
}
