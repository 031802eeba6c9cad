import "server-only";
/** How long a rotated-out secret keeps signing, so receivers can switch over. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
