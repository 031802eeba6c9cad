/**
 * Names callers and operators choose. Browser-safe; imports nothing.
 */

/** Workflow, context and model aliases: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
