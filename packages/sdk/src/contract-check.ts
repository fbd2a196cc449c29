/**
 * Compile-time only: the SDK's restated types (types.ts) must be exactly the
 * contract's (@pail/shared). Nothing imports this module; `tsc -b` checks it.
 */
import type * as Contract from '@pail/shared';
import type * as Sdk from './types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

export type ContractChecks = [
  Assert<Same<Sdk.StorageBucket, Contract.StorageBucket>>,
  Assert<Same<Sdk.BucketObject, Contract.BucketObject>>,
  Assert<Same<Sdk.UploadResult, Contract.UploadResult>>,
  Assert<Same<Sdk.ErrorCode, Contract.ErrorCode>>,
  Assert<Same<Sdk.ListBucketsBody, Contract.ListBucketsResponse>>,
  Assert<Same<Sdk.ListFilesBody, Contract.ListFilesResponse>>,
];
