/**
 * The Moderation screen's two limits of issue 33 point 3, in one place (no imports, so the
 * browser tests read them too): how long a moderation's notice offers Undo, and over how many
 * items a bulk action asks for confirmation first (moderation-undo.ts).
 */

/** How long a notice offers Undo (ms), counted while the focus is not in the notice. */
export const UNDO_MS = 10_000;

/** A bulk action over more items than this asks for confirmation first. */
export const CONFIRM_OVER = 10;
