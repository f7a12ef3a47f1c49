// The strict schema of `.github/agent-policy.yml` as written (before compilation into a Policy).
// Every object is strict: an unknown key is an error, never silently ignored.
import { z } from "zod";
import { parseCommandPattern } from "./command-pattern.js";
import { validateGlob } from "./glob.js";
import { DECISIONS, PERMISSION_LEVELS, TOOL_KINDS, TRIGGER_EVENTS } from "./types.js";

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (typeof value === "string" ? [value] : value), z.array(item).min(1));

const glob = z.string().superRefine((value, ctx) => {
  const problem = validateGlob(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const commandPattern = z.string().superRefine((value, ctx) => {
  const parsed = parseCommandPattern(value);
  if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
});

const DOMAIN = /^(\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/;
const domain = z.string().superRefine((value, ctx) => {
  if (!DOMAIN.test(value))
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a host name: write example.com, *.example.com (subdomains) or * (any), lower case, no scheme or path`,
    });
});

const name = z.string().regex(/^[A-Za-z0-9_.:*/@-]+$/, "names use letters, digits and _ . : * / @ -");
const allOrNames = z.preprocess((value) => (value === true ? ["*"] : value), oneOrMany(name));

export const decisionSchema = z.enum(DECISIONS);

const fetchRule = z.preprocess(
  (value) => (typeof value === "string" || Array.isArray(value) ? { domains: value } : value),
  z
    .strictObject({ domains: oneOrMany(domain).optional(), search: z.boolean().optional() })
    .refine(
      (v) => v.domains !== undefined || v.search !== undefined,
      "name `domains`, `search: true`, or both",
    ),
);

/** Keys of a rule entry that name a tool kind; one entry may name several. */
export const RULE_KIND_KEYS = TOOL_KINDS;

export const ruleEntrySchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, "rule ids use letters, digits and _ . -")
      .optional(),
    reason: z.string().min(1).optional(),
    read: oneOrMany(glob).optional(),
    edit: oneOrMany(glob).optional(),
    delete: oneOrMany(glob).optional(),
    move: oneOrMany(glob).optional(),
    search: oneOrMany(glob).optional(),
    execute: oneOrMany(commandPattern).optional(),
    fetch: fetchRule.optional(),
    think: z.literal(true, "`think: true` is the only form").optional(),
    other: allOrNames.optional(),
    switch_mode: allOrNames.optional(),
  })
  .refine(
    (entry) => RULE_KIND_KEYS.some((kind) => entry[kind] !== undefined),
    `a rule names at least one tool kind: ${TOOL_KINDS.join(", ")}`,
  );
export type RuleEntry = z.infer<typeof ruleEntrySchema>;

const ruleList = z.array(ruleEntrySchema);

const positiveInteger = z.int().positive();
export const limitsSchema = z.strictObject({
  "timeout-minutes": positiveInteger.optional(),
  "max-tool-calls": positiveInteger.optional(),
  "max-turns": positiveInteger.optional(),
});

const eventName = z.enum(TRIGGER_EVENTS);

export const conditionSchema = z.strictObject({
  event: oneOrMany(eventName).optional(),
  permission: z.enum(PERMISSION_LEVELS).optional(),
  fork: z.boolean().optional(),
  label: oneOrMany(z.string().min(1)).optional(),
  branch: oneOrMany(z.string().min(1)).optional(),
});

export const profileSchema = z.strictObject({
  when: conditionSchema,
  inherit: z.boolean().optional(),
  default: decisionSchema.optional(),
  allow: ruleList.optional(),
  ask: ruleList.optional(),
  deny: ruleList.optional(),
  limits: limitsSchema.optional(),
});

const testFacts = z.strictObject({
  event: eventName.optional(),
  permission: z.enum(PERMISSION_LEVELS).optional(),
  fork: z.boolean().optional(),
  labels: z.array(z.string()).optional(),
  branch: z.string().optional(),
});

export const testCaseSchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    expect: decisionSchema,
    facts: testFacts.optional(),
    read: oneOrMany(z.string()).optional(),
    edit: oneOrMany(z.string()).optional(),
    delete: oneOrMany(z.string()).optional(),
    move: z.tuple([z.string(), z.string()], "move takes [from, to]").optional(),
    search: oneOrMany(z.string()).optional(),
    execute: z.string().optional(),
    fetch: z.string().optional(),
    think: z.literal(true).optional(),
    other: z.string().optional(),
    switch_mode: z.string().optional(),
  })
  .refine(
    (test) => TOOL_KINDS.filter((kind) => test[kind] !== undefined).length === 1,
    `a test names exactly one tool kind with its subject, e.g. { execute: "npm test", expect: allow }`,
  );
export type TestCaseEntry = z.infer<typeof testCaseSchema>;

const AGENT_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const agentName = z.string().regex(AGENT_NAME, "agent names are lower-case words like claude or gemini");

export const policyFileSchema = z.strictObject({
  version: z.literal(1),
  agent: agentName.optional(),
  agents: z.strictObject({ allowed: z.array(agentName).min(1).optional() }).optional(),
  default: decisionSchema.optional(),
  allow: ruleList.optional(),
  ask: ruleList.optional(),
  deny: ruleList.optional(),
  profiles: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/, "profile names use letters, digits, _ and -"), profileSchema)
    .optional(),
  limits: limitsSchema.optional(),
  protected: z.array(glob).optional(),
  env: z
    .strictObject({
      pass: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names only"))
        .optional(),
    })
    .optional(),
  tests: z.array(testCaseSchema).optional(),
});
export type PolicyFile = z.infer<typeof policyFileSchema>;

/** Valid keys by place in the file, for "did you mean" hints on unknown keys. */
export const KEYS = {
  top: Object.keys(policyFileSchema.shape),
  rule: Object.keys(ruleEntrySchema.shape),
  profile: Object.keys(profileSchema.shape),
  when: Object.keys(conditionSchema.shape),
  limits: Object.keys(limitsSchema.shape),
  test: Object.keys(testCaseSchema.shape),
  facts: Object.keys(testFacts.shape),
  fetch: ["domains", "search"],
  env: ["pass"],
  agents: ["allowed"],
} as const;
