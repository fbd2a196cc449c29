import { useId, useState } from 'react';
import type { BucketObject, SignedUrl } from '@pail/shared';
import { createDownloadLink } from '../../api/signed-urls';
import { CopyButton } from '../../components/copy-button';
import { Dialog } from '../../components/dialog';
import { Icon } from '../../components/icons';
import { InlineError, Spinner } from '../../components/states';
import { useToast } from '../../hooks/toast';
import { copyText } from '../../lib/clipboard';
import { formatDateTime } from '../../lib/format';
import { DEFAULT_LINK_EXPIRY, linkLifetime, type LinkExpiry } from './link-expiry';
import { LinkExpiryPicker } from './link-expiry-picker';

interface Props {
  bucketId: number;
  /** The file to share; null keeps the dialog closed. */
  object: BucketObject | null;
  onClose: () => void;
}

/**
 * Makes a signed link that downloads one file without a session, for as long
 * as the user picks. The link is copied at once and also shown in a read-only
 * box, since the clipboard may be unavailable (plain http, permissions).
 */
export function ShareDialog({ bucketId, object, onClose }: Props) {
  const [expiry, setExpiry] = useState<LinkExpiry>(DEFAULT_LINK_EXPIRY);
  const [link, setLink] = useState<SignedUrl | null>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { notify } = useToast();
  const urlId = useId();

  const lifetime = linkLifetime(expiry);
  const problem = 'problem' in lifetime ? lifetime.problem : null;

  const close = () => {
    if (busy) return;
    setExpiry(DEFAULT_LINK_EXPIRY);
    setLink(null);
    setCopied(null);
    setError(null);
    onClose();
  };

  const create = async () => {
    if (!object) return;
    // Measured again at the click: "until 15:00" means fewer seconds the longer the dialog stayed open.
    const now = linkLifetime(expiry);
    if ('problem' in now) return;
    setBusy(true);
    setError(null);
    try {
      const made = await createDownloadLink(bucketId, object.filename, now.seconds);
      setLink(made);
      try {
        await copyText(made.url);
        setCopied(true);
        notify('Link copied to the clipboard');
      } catch {
        setCopied(false);
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={object !== null}
      title={object ? `Share “${object.filename}”` : 'Share'}
      onClose={close}
      busy={busy}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={close} disabled={busy}>
            {link ? 'Done' : 'Cancel'}
          </button>
          <button type="button" className="btn btn-primary" onClick={() => void create()} disabled={busy || problem !== null}>
            {busy ? <Spinner size={16} /> : <Icon name="link" />}
            {link ? 'Create a new link' : 'Create link'}
          </button>
        </>
      }
    >
      <div className="form">
        <p className="muted small">
          Anyone with the link can download this file without an account until it expires. It stops working early if you log out of this session or the bucket
          is deleted.
        </p>
        <LinkExpiryPicker value={expiry} onChange={setExpiry} problem={problem} disabled={busy} />
        {error ? <InlineError>{error}</InlineError> : null}
        {link ? (
          <div className="share-result" role="region" aria-label="Share link">
            <label className="field-label" htmlFor={urlId}>
              Share link
            </label>
            <div className="url-line">
              <input
                id={urlId}
                className="input url-input"
                type="text"
                readOnly
                value={link.url}
                onFocus={(e) => e.currentTarget.select()}
                spellCheck={false}
              />
              <CopyButton text={link.url} label="Copy share link" />
            </div>
            <p className="field-hint">
              {copied ? 'Copied to the clipboard. ' : copied === false ? 'Copy it from the box above: the clipboard is not available here. ' : ''}
              Expires {formatDateTime(link.expires_at)}.
            </p>
          </div>
        ) : null}
      </div>
    </Dialog>
  );
}
