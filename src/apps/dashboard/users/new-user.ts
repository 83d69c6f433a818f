import { formatRole, parseRole } from '../../../foundations/auth/roles.js';
import { InvalidInputError } from '../../../foundations/errors/kinds.js';
import { isUsername } from '../../../foundations/state/index.js';
import { hasControlCharacter } from '../../../foundations/validation/one-line.js';

export interface NewUser {
  username: string;
  name: string;
  password: string;
  /** As written (`editor@shop`); absent: admin. */
  role?: string;
}

// NIST SP 800-63B: at least 8 characters, allow at least 64; we ask for 10 and stop at 1024 to bound the work.
export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_NAME_LENGTH = 100;

export function checkPassword(password: unknown): string {
  if (typeof password !== 'string') throw new InvalidInputError('password: must be a string', 'password');
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH)
    throw new InvalidInputError(`password: must have at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
  if (length > MAX_PASSWORD_LENGTH)
    throw new InvalidInputError(`password: must have at most ${MAX_PASSWORD_LENGTH} characters`, 'password');
  return password;
}

/** A user to create, checked field by field; an unknown field is refused like everywhere in the API. */
export function checkNewUser(input: unknown): NewUser {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new InvalidInputError('the body must be a JSON object');
  const body = input as Record<string, unknown>;
  for (const field of Object.keys(body)) {
    if (!['username', 'name', 'password', 'role'].includes(field))
      throw new InvalidInputError(`${field}: unknown field; a user has username, name, password and role`, field);
  }
  if (!isUsername(body.username)) {
    throw new InvalidInputError(
      "username: must be 1 to 100 letters, digits, '.', '_', '@', '+' or '-', starting with a letter or digit",
      'username',
    );
  }
  const name = typeof body.name === 'string' ? body.name.trim() : undefined;
  if (name === undefined || name === '' || name.length > MAX_NAME_LENGTH || hasControlCharacter(name)) {
    throw new InvalidInputError(`name: must be the person's name, 1 to ${MAX_NAME_LENGTH} characters on one line`, 'name');
  }
  const user: NewUser = { username: body.username, name, password: checkPassword(body.password) };
  if (body.role !== undefined) user.role = formatRole(parseRole(body.role as string));
  return user;
}
