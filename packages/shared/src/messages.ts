/** Messages several schema modules share. */
export const NOT_AN_OBJECT = 'Body must be a JSON object';
