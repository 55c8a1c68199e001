/**
 * The tenant in every store query (docs/architecture.md#tenant-in-every-query, issue 31 point 2):
 * every exported function of `src/store/` that reads, changes or deletes rows of a tenant table (a
 * table whose rows carry `contractId`) takes the contract id, as its parameter `contractId` (first
 * after the executor) or as the `contractId` of the target row it is given (a parameter whose type
 * names `contractId`, or is an interface of a store module with that member), and names `contractId`/`contract_id` in its body's queries. Functions whose
 * work is installation-wide are listed in ALLOWLIST with the reason. `Kysely<any>` appears only in
 * migrations (the Kysely convention for them): everywhere else queries are typed by `Database`.
 *
 * Read with a careful parse of the source text (TypeScript 7 ships no compiler API to JavaScript):
 * comments left out, the module cut into its top-level declarations (each starts at column 0, the
 * house layout), a function's parameters found by matching brackets. The tenant tables come from
 * `src/store/tables.ts` (the `Database` interface and the row interfaces with a `contractId`
 * member); a function's tables are those its queries name (the first string argument of
 * `selectFrom`, `updateTable`, `deleteFrom` and the joins, `'table.column'` references, raw `sql`
 * text after `from`/`update`/`join`), its module's unexported helpers it calls included, and the
 * tables of any store function it calls that takes no contract (`withCallees`). Inserts alone are
 * not counted: a row inserted carries its contract in its values. A function taking the contract
 * that calls a store function taking and naming it (store/items/ included) names it through that callee
 * (`withScopedCallees`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutComments } from './services-structure.test.ts';

const SRC = join(import.meta.dirname, '..', 'src');
const STORE = join(SRC, 'store');

/**
 * Exported store functions that touch tenant tables without a contract, each with why. Keys are
 * `<module>:<function>` (module below src/store/).
 */
export const ALLOWLIST: Record<string, string> = {
  // The owner lookups of management/ownership.ts owned(): they answer only the contract id, for its 404/403.
  'records.ts:ownerOf': 'answers only the contract owning a record (no other column), so owned() can tell 404 from 403 before the read with the contract',
  'filters.ts:filterOwner': 'ownerOf over filter sets and chains, for owned() and the CLI --filter check',
  // The collector's scheduling: it walks every contract's inputs and holds the rows it claimed.
  'inputs.ts:liveInputs': 'the collector: the inputs that may run, of every contract (callers add their conditions)',
  'inputs.ts:dueInputs': 'the collector: due inputs of every contract',
  'inputs.ts:anyDueInput': 'the collector: whether any input of any contract is due',
  'inputs.ts:activeInputsOf': 'stream listeners: one Mastodon or Jetstream stream serves inputs of every contract',
  'inputs.ts:politenessKeySql': 'the politeness key expression over the inputs row (used by the installation-wide claims)',
  'inputs.ts:claimDueInputs': 'the collector claims due inputs of every contract across processes (docs/operations.md#several-processes)',
  'inputs.ts:releaseClaims': "the collector gives back its own claims (ids and claim time it just took), of any contract",
  'inputs.ts:setFeedMode': 'stream listeners and the WebSub subscriber mark the inputs one stream or hub serves, of any contract',
  'websub.ts:findSubscription': 'the WebSub callback (/websub/{id}) finds its subscription by the 128-bit callback id alone: the hub knows no contract',
  'websub.ts:listSubscriptions': 'the WebSub subscriber compares every subscription with the inputs that want one, installation-wide',
  'websub.ts:updateSubscription': 'the WebSub subscriber and callback address a subscription by its secret callback id',
  'websub.ts:deleteSubscription': 'the WebSub subscriber addresses a subscription by its secret callback id',
  'websub.ts:dueSubscriptions': 'the WebSub subscriber: due subscriptions of every contract',
  'websub.ts:pushableInputs': 'the WebSub subscriber: inputs of every contract that may be pushed',
  'kudos.ts:claimKudosDue': 'the kudos refresh claims due items of every contract (rows carry their contract, then updateKudos takes it)',
  // Removed or edited at the source (issue 34 point 1): the source changed the post for everyone.
  'removals.ts:removeItems': "a deletion at the source removes the item from every collection holding it, of every contract; each copy is then removed as its own collection's contract (ofContract)",
  'removals.ts:updateFromSource': "an edit at the source updates every stored copy, of every contract; each through applyEdits with its own collection's contract",
  'retention.ts:expireItems': 'the retention sweep: every collection with a limit, installation-wide (docs/api.md#retention)',
  'retention.ts:expireItemsOnce': 'expireItems under the installation-wide lock',
  // Workers addressing their own claimed rows by a sequence or job id.
  'jobs.ts:claimJob': 'the job runner (pg-boss) knows only the job id it was handed; installation-wide',
  'jobs.ts:jobProgress': 'the job runner, by the job id it claimed',
  'jobs.ts:finishJob': 'the job runner, by the job id it claimed',
  'jobs.ts:failJob': 'the job runner, by the job id it claimed',
  'jobs.ts:unfinishedJobs': 'the job runner re-queues unfinished jobs of every contract at start',
  'outbox.ts:claimDeliveries': 'the webhook delivery worker claims due deliveries of every contract',
  'outbox.ts:releaseClaims': 'the webhook delivery worker gives back its own claims',
  'outbox.ts:recordAttempts': 'the webhook delivery worker records attempts of the rows it claimed (each carries its contract, used when disabling)',
  'outbox.ts:pruneDeliveries': 'the outbox cleanup: ended deliveries of every contract',
  'outbox.ts:pendingCount': 'installation-wide pending count (benchmark progress, metrics)',
  // Sign-in and account flows: the subject is a token or a consumer, not a contract.
  'connect.ts:saveConnectState': 'an OAuth connect flow under way, found again by its state hash at the callback (which names no contract); expired ones of every contract are dropped',
  'connect.ts:takeConnectState': 'the OAuth callback takes its flow by the state hash alone',
  'invitations.ts:findInvitationByToken': "the invitee's page finds the invitation by its link's token (a secret), before any contract is known",
  'invitations.ts:acceptInvitation': "the invitee accepts by the link's token; the contract comes from the invitation",
  'password-resets.ts:findPasswordResetByToken': 'the reset page finds the link by its token (a secret)',
  'password-resets.ts:usePasswordReset': 'the reset page uses the link by its token (a secret)',
  'consumers.ts:auditAccount': "a consumer's account change is audited in every contract it holds a grant to",
  'consumers.ts:setPasswordHash': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'consumers.ts:writePasswordHash': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'consumers.ts:signOutEverywhere': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'two-factor.ts:enableTwoFactor': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'two-factor.ts:disableTwoFactor': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'two-factor.ts:regenerateRecoveryCodes': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'two-factor.ts:useRecoveryCode': 'a consumer-wide change, audited in each of its contracts (auditAccount)',
  'contracts.ts:grantedContracts': "a consumer's grants: the contracts it may use, read by consumer id",
  // Reads whose subject names the contract another way.
  'collections.ts:findActiveCollectionBySlugs': "public reads: the contract is named by its public slug in the same query (contracts.slug), the path's own contract",
  'contract-transfer.ts:exportContract': 'takes the contract itself (id or slug) and scopes every query by it (CLI export)',
  'analytics.ts:addCounts': 'an upsert of beacon counts: every row inserted carries its contractId; the conflict target is one row of its collection',
  'image-screenings.ts:claimScreenings': "the collector's screening job claims due rows of every contract, in turns between contracts (collect/screening.ts)",
  'inputs.ts:inputIdsOfSource': "an Atom tombstone's ref means something only inside its feed, and a change at the source applies to every contract following that feed (docs/services.md, rss Deletions)",
  'reverify.ts:claimVerifyDue': "the collector's re-verification claims due items of every contract; each claimed row carries its contract (collect/reverify.ts, docs/services.md#re-verification)",
  'reverify.ts:markVerified': "a lookup's answer holds for every stored copy of a post, in every contract that collected it (docs/services.md#re-verification)",
  'reverify.ts:releaseVerify': "a failed lookup makes every copy of its posts due again, in every contract that collected them (docs/services.md#re-verification)",
  'erasures.ts:pruneErasedItems': "the retention job prunes erased ids older than the bound in every contract (docs/operations.md, ERASED_KEEP_MS)",
};

/** Store modules not read here, with why (the items modules, store/items/, have their own check: src/store/items/tenant.test.ts). */
const SKIPPED_MODULES: Record<string, string> = {
};

const camelToSnake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The members of each `interface` of `source`, by interface name (`name: type` at two spaces' indent). */
function interfaces(source: string): Map<string, Map<string, string>> {
  const found = new Map<string, Map<string, string>>();
  for (const match of withoutComments(source).matchAll(/^(?:export )?interface (\w+)[^{]*\{\n([\s\S]*?)^\}/gm)) {
    const members = new Map<string, string>();
    for (const member of match[2]!.matchAll(/^  (\w+)\??: (.+?);?$/gm)) members.set(member[1]!, member[2]!);
    found.set(match[1]!, members);
  }
  return found;
}

/** The tenant tables (camel-case names of `Database`) whose row interface has `contractId`. */
export function tenantTables(source: string): Set<string> {
  const all = interfaces(source);
  const database = all.get('Database') ?? new Map<string, string>();
  return new Set([...database].filter(([, row]) => all.get(row)?.has('contractId')).map(([table]) => table));
}

export interface StoreFunction {
  module: string;
  name: string;
  /** Whether a parameter is `contractId` or has a type that names `contractId`. */
  takesContract: boolean;
  /** Whether the body (with its helpers) names `contractId` or `contract_id`. */
  namesContract: boolean;
  /** The tenant tables its queries read, change or delete. */
  tables: string[];
  /** The names it calls (to follow calls into other store modules). */
  calls: string[];
}

/** The index of the bracket closing the one at `open` in `text`, skipping strings and templates. */
function closing(text: string, open: number): number {
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const char = text[i]!;
    if (char === "'" || char === '"' || char === '`') {
      for (i++; i < text.length && text[i] !== char; i++) if (text[i] === '\\') i++;
    } else if (pairs[char]) stack.push(pairs[char]!);
    else if (char === stack.at(-1)) {
      stack.pop();
      if (!stack.length) return i;
    }
  }
  return text.length;
}

/** The top-level parameters of a parameter list's text, split at commas outside brackets. */
function parameters(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if ('([{<'.includes(char)) depth++;
    else if (')]}>'.includes(char) && text[i - 1] !== '=') depth--;
    else if (char === ',' && depth === 0) {
      found.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  found.push(text.slice(start).trim());
  return found.filter(Boolean);
}

/** The tables `code` queries (not inserts), as camel-case `Database` names among `tables`. */
function queriedTables(code: string, tables: Set<string>): Set<string> {
  const found = new Set<string>();
  const snake = new Map([...tables].map((table) => [camelToSnake(table), table]));
  for (const match of code.matchAll(/\.(?:selectFrom|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*['"](\w+)/g)) if (tables.has(match[1]!)) found.add(match[1]!);
  for (const match of code.matchAll(/['"](\w+)\.\w+['"]/g)) if (tables.has(match[1]!)) found.add(match[1]!);
  for (const match of code.matchAll(/\b(?:from|update|join)\s+([a-z_]+)\b/g)) {
    const table = snake.get(match[1]!);
    if (table) found.add(table);
  }
  return found;
}

const DECLARATION = /^(export )?(?:async )?(?:function\*? (\w+)|const (\w+)\b)/;

/** The exported functions of one store module, with what they query and whether they carry the contract. */
export function storeFunctions(module: string, source: string, tables: Set<string>, shared: readonly string[] = []): StoreFunction[] {
  const lines = withoutComments(source).split('\n');
  // The interfaces that carry the contract (`AuditQuery`, store/items/read-sql.ts `ItemQuery`): a parameter of one takes it.
  const carrying = [...shared, ...[...interfaces(source)].filter(([, members]) => members.has('contractId')).map(([name]) => name)];
  const declarations: { name: string; exported: boolean; text: string; after: number }[] = [];
  let current: { name: string; exported: boolean; lines: string[]; after: number } | undefined;
  const close = () => current && declarations.push({ name: current.name, exported: current.exported, text: current.lines.join('\n'), after: current.after });
  for (const line of lines) {
    const match = DECLARATION.exec(line);
    if (match || /^[A-Za-z@]/.test(line)) {
      close();
      current = match ? { name: (match[2] ?? match[3])!, exported: Boolean(match[1]), lines: [], after: match[0].length } : undefined;
    }
    current?.lines.push(line);
  }
  close();
  const local = new Map(declarations.filter((declaration) => !declaration.exported).map((declaration) => [declaration.name, declaration.text]));
  const reach = (text: string): string[] => {
    const seen = new Set<string>();
    const queue = [text];
    const parts = [text];
    while (queue.length) {
      for (const [name, helper] of local) {
        if (seen.has(name) || !new RegExp(`\\b${name}\\b`).test(queue[0]!)) continue;
        seen.add(name);
        queue.push(helper);
        parts.push(helper);
      }
      queue.shift();
    }
    return parts;
  };
  return declarations
    .filter((declaration) => declaration.exported)
    .flatMap(({ name, text, after }) => {
      const isFunction = /^\s*\*?\s*(?:<[^(]*>)?\s*\(/.test(text.slice(after)) || /^\s*=\s*(?:async\s*)?(?:function\b[^(]*|<[^(]*>\s*)?\(/.test(text.slice(after));
      const open = text.indexOf('(', after);
      if (!isFunction || open < 0) return [];
      const end = closing(text, open);
      const params = parameters(text.slice(open + 1, end));
      const body = reach(text.slice(end + 1)).join('\n');
      const typeOf = (param: string) => param.replace(/^[^:]*:/, '');
      const takesContract = params.some((param) => /^contractId\b/.test(param) || /\bcontractId\b/.test(typeOf(param)) || carrying.some((name) => new RegExp(`\\b${name}\\b`).test(typeOf(param))));
      // A function over any record or owned table (store/records.ts) queries tenant tables through its parameter.
      const queried = queriedTables(body, tables);
      const reads = /\.(?:selectFrom|updateTable|deleteFrom)\(/.test(body);
      const over = params.map((param) => /:\s*(RecordTable|OwnedTable)\b/.exec(param)?.[1]).find(Boolean);
      if (over && reads) queried.add(`<${over}>`);
      return [{ module, name, takesContract, namesContract: /\bcontractId\b|\bcontract_id\b/.test(body), tables: [...queried].sort(), calls: [...body.matchAll(/\b(\w+)\(/g)].map((match) => match[1]!) }];
    });
}

const tables = tenantTables(readFileSync(join(STORE, 'tables.ts'), 'utf8'));
const modules = readdirSync(STORE)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !(name in SKIPPED_MODULES))
  .sort();
/** Every store module's source (store/items/ included), for the interfaces that carry the contract and the functions that scope by it. */
const sources = readdirSync(STORE, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.startsWith('migrations'))
  .map((name) => ({ module: name, source: readFileSync(join(STORE, name), 'utf8') }));
// Not the row interfaces of tables.ts: a parameter of one (`Updateable<WebsubSubscriptionTable>`) is a change, not the contract.
const carrying = sources.filter(({ module }) => module !== 'tables.ts').flatMap(({ source }) => [...interfaces(source)].filter(([, members]) => members.has('contractId')).map(([name]) => name));
const scoped = new Set(
  sources
    .flatMap(({ module, source }) => storeFunctions(module, source, tables, carrying))
    .filter((fn) => fn.takesContract && fn.namesContract)
    .map((fn) => fn.name),
);
const functions = withScopedCallees(
  withCallees(modules.flatMap((module) => storeFunctions(module, readFileSync(join(STORE, module), 'utf8'), tables, carrying))),
  scoped,
);

/**
 * `found` with `namesContract` set for a function that takes the contract and calls a store
 * function that takes and names it (`searchItemKeys` through store/items/read-sql.ts `whereSql`,
 * whose `ItemQuery` carries the contract): its tenant term is written once, in the callee.
 */
export function withScopedCallees(found: StoreFunction[], scoped: ReadonlySet<string>): StoreFunction[] {
  return found.map((fn) => (fn.takesContract && !fn.namesContract && fn.calls.some((name) => scoped.has(name)) ? { ...fn, namesContract: true } : fn));
}

/**
 * `found` with the tables of the store functions each one calls that take no contract: a function
 * calling an unscoped read is itself unscoped (`filterOwner` → `ownerOf`), until a fixpoint.
 */
export function withCallees(found: StoreFunction[]): StoreFunction[] {
  const byName = new Map(found.map((fn) => [fn.name, fn]));
  for (let changed = true, rounds = 0; changed && rounds < 20; rounds++) {
    changed = false;
    for (const fn of found) {
      for (const name of fn.calls) {
        const callee = byName.get(name);
        if (!callee || callee === fn || callee.takesContract) continue;
        const added = callee.tables.filter((table) => !fn.tables.includes(table));
        if (added.length) {
          fn.tables = [...fn.tables, ...added].sort();
          changed = true;
        }
      }
    }
  }
  return found;
}

describe('reading the store', () => {
  it('finds the tenant tables', () => {
    for (const table of ['inputs', 'collections', 'credentials', 'filterLists', 'webhooks', 'customizations', 'articles', 'items']) expect(tables).toContain(table);
    for (const table of ['consumers', 'tokens', 'loginSessions', 'rateLimits', 'contracts']) expect(tables).not.toContain(table);
  });

  it.each([
    ['export async function f(db: Db, id: string) { return db.selectFrom(\'inputs\').where(\'id\', \'=\', id).execute(); }', false, false, ['inputs']],
    ['export async function f(db: Db, contractId: string, id: string) { return db.selectFrom(\'inputs\').where(\'contractId\', \'=\', contractId).where(\'id\', \'=\', id).execute(); }', true, true, ['inputs']],
    ['export async function f(db: Db, input: Pick<InputRow, \'id\' | \'contractId\'>) { await sql`update inputs set x = 1 where contract_id = ${input.contractId}`.execute(db); }', true, true, ['inputs']],
    ['function q(db: Db) { return db.selectFrom(\'consumers\').innerJoin(\'grants\', \'grants.consumerId\', \'consumers.id\'); }\nexport const f = (db: Db) => q(db).execute();', false, false, ['grants']],
    ['export async function f(trx: Trx, rows: NewInput[]) { await trx.insertInto(\'inputs\').values(rows).execute(); }', false, false, []],
    ['export async function f(db: Db, id: string) { // contractId\n return db.selectFrom(\'tokens\').execute(); }', false, false, []],
    ['interface Q {\n  contractId: string;\n}\nexport async function f(db: Db, query: Q) { return db.selectFrom(\'jobs\').where(\'contractId\', \'=\', query.contractId).execute(); }', true, true, ['jobs']],
  ])('%s', (source, takesContract, namesContract, queried) => {
    const [found] = storeFunctions('x.ts', source, tables);
    expect(found).toMatchObject({ name: 'f', takesContract, namesContract, tables: queried });
  });
});

describe('following calls', () => {
  it('a caller of an unscoped store function touches its tables; a caller of a scoped one does not', () => {
    const found = withCallees([
      { module: 'a.ts', name: 'owner', takesContract: false, namesContract: false, tables: ['inputs'], calls: [] },
      { module: 'a.ts', name: 'find', takesContract: true, namesContract: true, tables: ['jobs'], calls: [] },
      { module: 'b.ts', name: 'viaOwner', takesContract: false, namesContract: false, tables: [], calls: ['owner'] },
      { module: 'b.ts', name: 'viaFind', takesContract: false, namesContract: false, tables: [], calls: ['find'] },
    ]);
    expect(found.map((fn) => fn.tables)).toEqual([['inputs'], ['jobs'], ['inputs'], []]);
  });
});

describe('following calls into scoped functions', () => {
  it('a function taking the contract names it through a callee that takes and names it; not one without the contract', () => {
    const fn = (name: string, takesContract: boolean, calls: string[]): StoreFunction => ({ module: 'a.ts', name, takesContract, namesContract: false, tables: ['items'], calls });
    const found = withScopedCallees([fn('search', true, ['whereSql']), fn('unscoped', false, ['whereSql']), fn('other', true, ['format'])], new Set(['whereSql']));
    expect(found.map((f) => f.namesContract)).toEqual([true, false, false]);
  });

  it('an interface of another store module that carries the contract is taken', () => {
    const [found] = storeFunctions('x.ts', "export async function f(db: Db, query: ItemQuery) { return db.selectFrom('items').execute(); }", tables, ['ItemQuery']);
    expect(found).toMatchObject({ takesContract: true, namesContract: false });
  });
});

describe('the tenant in every store query', () => {
  const tenant = functions.filter((fn) => fn.tables.length > 0);
  it.each(tenant.map((fn) => [`${fn.module}:${fn.name}`, fn] as const))('%s', (key, fn) => {
    if (key in ALLOWLIST) {
      expect(ALLOWLIST[key]!.length, `${key} is allowed without a contract: say why`).toBeGreaterThan(10);
      return;
    }
    expect({ key, takesContract: fn.takesContract, namesContract: fn.namesContract }, `${key} queries ${fn.tables.join(', ')}`).toEqual({ key, takesContract: true, namesContract: true });
  });

  it('allows only functions that exist and query tenant tables', () => {
    const known = new Set(tenant.map((fn) => `${fn.module}:${fn.name}`));
    expect(Object.keys(ALLOWLIST).filter((key) => !known.has(key))).toEqual([]);
  });
});

describe('Kysely<any> only in migrations', () => {
  const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !join(entry.parentPath, entry.name).startsWith(join(STORE, 'migrations')))
    .map((entry) => join(entry.parentPath, entry.name));
  it('no module outside src/store/migrations casts to Kysely<any>', () => {
    const found = files.filter((path) => /Kysely<any>/.test(readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1')));
    expect(found.map((path) => path.slice(SRC.length + 1))).toEqual([]);
  });
});
