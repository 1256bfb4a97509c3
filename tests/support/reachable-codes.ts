/**
 * Which error codes each served RPC can answer, read from the source with the TypeScript
 * checker: every AppErrorCode written as a string in code its handler can reach — the handler
 * itself and, transitively, every function, constant or code map it names in apps/api/src or
 * packages/services/src (where AppErrors are made; a provider's SandboxError becomes one
 * through viaProvider's map, which is reached with it). Interface methods (the provider, the
 * database) have no body here and end the walk. An over-approximation by construction: a code
 * compared against (`error.code === "NOT_FOUND"`) counts too. docs/decisions.md, "The OpenAPI
 * document", says what the contracts' `errors` must agree with.
 */
import path from "node:path";
import { APP_ERROR_CODES, type AppErrorCode } from "@rakazo/services";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WALKED = [path.join(ROOT, "apps/api/src/"), path.join(ROOT, "packages/services/src/")];
const CODES: ReadonlySet<string> = new Set(APP_ERROR_CODES);

export function reachableCodesByRpc(): Map<string, Set<AppErrorCode>> {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("tsconfig.json did not parse");
  const index = path.join(ROOT, "apps/api/src/rpc/index.ts");
  const program = ts.createProgram({ rootNames: [index], options: config.options });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(index);
  if (!source) throw new Error(`${index} is not in the program`);

  const walkable = (node: ts.Node) => {
    const file = node.getSourceFile().fileName;
    return WALKED.some((dir) => file.startsWith(dir)) && !file.endsWith(".test.ts");
  };
  const memo = new Map<ts.Node, Set<AppErrorCode>>();

  const codesOf = (root: ts.Node): Set<AppErrorCode> => {
    const known = memo.get(root);
    if (known) return known;
    const found = new Set<AppErrorCode>();
    memo.set(root, found); // recursion (mutual calls) sees the set being filled
    const visit = (node: ts.Node): void => {
      if (ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && CODES.has(node.text)) {
        found.add(node.text as AppErrorCode);
      }
      if (ts.isIdentifier(node)) {
        let symbol = checker.getSymbolAtLocation(node);
        if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
        for (const declaration of symbol?.declarations ?? []) {
          if (declaration === root || !walkable(declaration)) continue;
          if (isValueDeclaration(declaration)) for (const code of codesOf(declaration)) found.add(code);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(root);
    return found;
  };

  const handlers = findHandlers(source);
  const byRpc = new Map<string, Set<AppErrorCode>>();
  for (const [name, expression] of handlers) byRpc.set(name, codesOf(expression));
  return byRpc;
}

function isValueDeclaration(node: ts.Declaration): boolean {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isVariableDeclaration(node) ||
    ts.isClassDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isPropertyAssignment(node) ||
    ts.isShorthandPropertyAssignment(node) ||
    ts.isPropertyDeclaration(node) ||
    ts.isGetAccessorDeclaration(node)
  );
}

/** `HANDLERS` in apps/api/src/rpc/index.ts: RPC name → the expression bound to it. */
function findHandlers(source: ts.SourceFile): Map<string, ts.Expression> {
  const found = new Map<string, ts.Expression>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText() === "HANDLERS") {
      const literal = node.initializer;
      if (!literal || !ts.isObjectLiteralExpression(literal))
        throw new Error("HANDLERS is not an object literal");
      for (const property of literal.properties) {
        if (!ts.isPropertyAssignment(property) || !ts.isStringLiteral(property.name)) {
          throw new Error(`HANDLERS entry not read: ${property.getText()}`);
        }
        found.set(property.name.text, property.initializer);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (found.size === 0) throw new Error("HANDLERS not found");
  return found;
}
