export * from './errors.js';
export * from './plans.js';
export * from './names.js';
export * from './schemas.js';
export * from './file-details-schemas.js';
