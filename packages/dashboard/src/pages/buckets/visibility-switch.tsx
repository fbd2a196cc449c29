import { useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { setVisibility } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Switch } from '../../components/switch';
import { useToast } from '../../hooks/toast';
import { pluralize } from '../../lib/format';

interface Props {
  bucket: StorageBucket;
  onChanged: (bucket: StorageBucket) => void;
  /** The visible words; by default the bucket's state (Public or Private), for where no badge says it. */
  text?: string;
}

/** Private at once; public only after saying what that means, since every file becomes readable by anyone with its URL. */
export function VisibilitySwitch({ bucket, onChanged, text }: Props) {
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const { notify } = useToast();

  const apply = async (makePublic: boolean) => {
    await setVisibility(bucket.id, makePublic ? 'public' : 'private');
    onChanged({ ...bucket, public: makePublic });
    notify(makePublic ? `${bucket.name} is now public: anyone with a file URL can download it` : `${bucket.name} is now private`);
  };

  const makePrivate = async () => {
    setBusy(true);
    try {
      await apply(false);
    } catch (err) {
      notify(`Could not change visibility: ${err instanceof Error ? err.message : String(err)}`, 'error');
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Switch
        checked={bucket.public}
        onChange={(makePublic) => (makePublic ? setConfirming(true) : void makePrivate())}
        disabled={busy}
        label={`Public access for ${bucket.name}`}
        text={text ?? (bucket.public ? 'Public' : 'Private')}
      />
      <ConfirmDialog
        open={confirming}
        title={`Make “${bucket.name}” public?`}
        confirmLabel="Make public"
        onClose={() => setConfirming(false)}
        onConfirm={() => apply(true)}
      >
        <div className="prose">
          <p>
            Anyone who has the URL of a file in <strong>{bucket.name}</strong> will be able to download it, without signing in or a key
            {bucket.object_count > 0 ? <> — that includes the {pluralize(bucket.object_count, 'file')} in it now</> : null}.
          </p>
          <p>You can make it private again at any time.</p>
        </div>
      </ConfirmDialog>
    </>
  );
}
