// A cafe's hours and distance as a reader sees them: "Open · closes at 22:00", the week's hours in the
// cafe's own time zone, "350 m". The server decides whether a cafe is open (openNow, nextChange); this
// only words it. The hours' times are the cafe's local times already: shown as stored.
import { currentLanguage, t } from './i18n.js';

export const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/// "08:00–18:00, 19:00–02:00", or "" for a closed day.
export function intervalsText(intervals) {
  return (intervals || []).map(([start, end]) => `${start}–${end}`).join(', ');
}

/// The reverse of intervalsText (a hyphen or an en dash between the times); throws on anything else.
export function parseIntervals(text) {
  const trimmed = text.trim();
  if (!trimmed) return [];
  return trimmed.split(/\s*,\s*/).map((part) => {
    const match = /^(\d{2}:\d{2})\s*[-–]\s*(\d{2}:\d{2})$/.exec(part);
    if (!match) throw new Error(t('hours.badInterval').replace('{text}', part));
    return [match[1], match[2]];
  });
}

/// The local date (YYYY-MM-DD) of an instant in a time zone.
function localDate(date, timeZone) {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
}

/// "Open · closes at 22:00" / "Closed · opens tomorrow at 08:00", in the cafe's time zone; null without hours.
export function hoursNote(cafe) {
  if (cafe.openNow === null || cafe.openNow === undefined) return null;
  const state = t(cafe.openNow ? 'hours.open' : 'hours.closed');
  if (!cafe.nextChange) return state;
  const at = new Date(cafe.nextChange.at);
  const zone = cafe.timeZone || undefined;
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  const days = Math.round((Date.parse(localDate(at, zone)) - Date.parse(localDate(new Date(), zone))) / 86_400_000);
  const day = days === 0 ? '' : days === 1 ? t('hours.tomorrow')
    : new Intl.DateTimeFormat(currentLanguage() === 'ja' ? 'ja-JP' : 'en-GB', { timeZone: zone, weekday: 'long' }).format(at);
  const change = t(cafe.nextChange.opens ? 'hours.opensAt' : 'hours.closesAt').replace('{day}', day).replace('{time}', time).replace(/\s+/g, ' ').trim();
  return `${state} · ${change}`;
}

/// "350 m", "1.2 km".
export function distanceText(metres) {
  return metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(metres < 10_000 ? 1 : 0)} km`;
}
