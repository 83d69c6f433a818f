/** OFREP puts the flag key in the path; the route table matches this prefix (a module of its own, free of import cycles). */
export const OFREP_FLAG_PREFIX = '/ofrep/v1/evaluate/flags/';
