// C10.1: what an installation's billing looks like the moment it becomes active.
export function billingOnInstall(pricing: Record<string, unknown>, now: Date) {
  if (pricing?.type !== 'recurring') return { billingStatus: 'none', trialEndsAt: null, billingStartDate: null };
  const trialDays = Number(pricing.trialDays ?? 0);
  if (trialDays > 0) {
    const end = new Date(now.getTime() + trialDays * 86_400_000);
    return { billingStatus: 'trialing', trialEndsAt: end, billingStartDate: end };
  }
  return { billingStatus: 'active', trialEndsAt: null, billingStartDate: now };
}
