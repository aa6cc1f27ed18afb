export const isoNow = (now = Date.now()) => new Date(now).toISOString();

export const addMinutes = (iso: string, minutes: number) => new Date(Date.parse(iso) + minutes * 60_000).toISOString();
