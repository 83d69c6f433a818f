// RFC 3339 date-time, the ISO 8601 profile JSON Schema's "date-time" format means.
// ajv-formats is not a dependency, so the format is checked here.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= (month === 2 && !isLeapYear(year) ? 28 : DAYS_IN_MONTH[month - 1]);
}

/** True for a full calendar date such as `2027-03-31` (JSON Schema's "date" format); false for Feb 30. */
export function isDate(value: string): boolean {
  const m = DATE.exec(value);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** True for `2024-05-01T12:00:00Z`, `2024-05-01T12:00:00.123+02:00`; false for impossible dates like Feb 30. */
export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  if (!isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}
