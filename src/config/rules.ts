// Rules between variables, checked on what parsed (a variable that did not parse is reported once,
// as itself). Production refuses what is only safe on a developer's machine.
import { refusal } from './refusal.js';
import { MIN_SECRET_LENGTH, present, type Env, type ParsedEnv } from './variables.js';

export function ruleProblems(env: Env, values: ParsedEnv): string[] {
  const problems: string[] = [];
  const unset = (name: 'SVC_SECRET' | 'DATABASE_URL' | 'SVC_ADMIN_EMAIL' | 'SVC_ADMIN_PASSWORD') => present(env[name]) === undefined;
  if (values.NODE_ENV === 'production') {
    if (unset('SVC_SECRET')) problems.push(refusal(env, 'SVC_SECRET', `required in production (at least ${MIN_SECRET_LENGTH} random characters; without it a secret would be generated into the data dir)`));
    if (unset('DATABASE_URL')) problems.push(refusal(env, 'DATABASE_URL', 'required in production (the embedded database is for one process on one machine)'));
    if (values.SVC_TEST_CLOCK === true) problems.push(refusal(env, 'SVC_TEST_CLOCK', 'refused in production (it lets the operator move the clock)'));
    if (values.SVC_SEED === 'demo') problems.push(refusal(env, 'SVC_SEED', 'refused in production (the demo accounts have published passwords)'));
  }
  if (unset('SVC_ADMIN_EMAIL') !== unset('SVC_ADMIN_PASSWORD')) {
    const missing = unset('SVC_ADMIN_EMAIL') ? 'SVC_ADMIN_EMAIL' : 'SVC_ADMIN_PASSWORD';
    problems.push(refusal(env, missing, 'SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD are set together or not at all'));
  }
  return problems;
}
