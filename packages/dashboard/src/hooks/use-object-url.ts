import { useEffect, useState } from 'react';
import { fileApiPath } from '../api/http';

export type Loaded = { kind: 'blob'; url: string; blob: Blob } | { kind: 'text'; text: string; truncated: boolean };

const TEXT_PREVIEW_CHARS = 200_000;

/**
 * Fetches a file with the session for preview. Blob URLs are used (not the
 * file URL itself) so private files and "attachment" downloads preview too.
 */
export function useFilePreview(bucketId: number, filename: string | null, asText: boolean) {
  const [state, setState] = useState<{ loading: boolean; error?: string; value?: Loaded }>({ loading: false });

  useEffect(() => {
    if (filename === null) {
      setState({ loading: false });
      return;
    }
    const controller = new AbortController();
    let objectUrl: string | null = null;
    setState({ loading: true });
    (async () => {
      const response = await fetch(fileApiPath(bucketId, filename), {
        credentials: 'same-origin',
        signal: controller.signal,
      });
      if (!response.ok) throw new Error(`Could not load the file (${response.status})`);
      const blob = await response.blob();
      if (asText) {
        const text = await blob.text();
        return {
          kind: 'text' as const,
          text: text.slice(0, TEXT_PREVIEW_CHARS),
          truncated: text.length > TEXT_PREVIEW_CHARS,
        };
      }
      objectUrl = URL.createObjectURL(blob);
      return { kind: 'blob' as const, url: objectUrl, blob };
    })().then(
      (value) => {
        if (!controller.signal.aborted) setState({ loading: false, value });
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setState({ loading: false, error: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => {
      controller.abort();
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [bucketId, filename, asText]);

  return state;
}
