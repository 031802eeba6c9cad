import "server-only";
/**
 * String formats as GBNF for the string's content. Each grammar generates only values ajv-formats
 * accepts (a subset where the full format is irregular: dates stop at the 28th of February, e-mail
 * local parts use the common characters, URIs are http(s) URLs).
 */
const DATE =
  '[0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02" "-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))';
const TIME = '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])';
const LABEL = "[a-zA-Z0-9] ([a-zA-Z0-9-]{0,20} [a-zA-Z0-9])?";
const HOST = `${LABEL} ("." ${LABEL}){0,3} "." [a-zA-Z]{2,6}`;
/** ajv-formats' `url` allows no "--" inside a label (found by the grammar fuzzer, on a held-out schema). */
const URL_LABEL = '[a-zA-Z0-9]{1,12} ("-" [a-zA-Z0-9]{1,12}){0,2}';
const URL_HOST = `${URL_LABEL} ("." ${URL_LABEL}){0,3} "." [a-zA-Z]{2,6}`;
const OCTET = '("25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9]? [0-9])';

export const FORMATS: Record<string, string> = {
  date: DATE,
  time: TIME,
  "date-time": `${DATE} "T" ${TIME}`,
  uuid: '[0-9a-f]{8} "-" [0-9a-f]{4} "-" [1-5] [0-9a-f]{3} "-" [89ab] [0-9a-f]{3} "-" [0-9a-f]{12}',
  email: `[a-zA-Z0-9_+-]{1,32} ("." [a-zA-Z0-9_+-]{1,32}){0,3} "@" ${HOST}`,
  hostname: HOST,
  ipv4: `${OCTET} "." ${OCTET} "." ${OCTET} "." ${OCTET}`,
  uri: `"http" "s"? "://" ${HOST} ("/" [a-zA-Z0-9._~-]{0,24}){0,4}`,
  "uri-reference": `"http" "s"? "://" ${HOST} ("/" [a-zA-Z0-9._~-]{0,24}){0,4}`,
  url: `"http" "s"? "://" ${URL_HOST} ("/" [a-zA-Z0-9._~-]{0,24}){0,4}`,
};
