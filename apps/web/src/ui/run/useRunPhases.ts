// A run's phases (GET /v1/runs/:id/phases); until the run has ended the API answers 409, kept as a note.
import { useCallback, useEffect, useState } from 'react';
import type { RunPhasesView } from '../../types';
import { ApiError } from '../api';
import { useApi } from '../context';

export function useRunPhases(id: string): { view: RunPhasesView | null; note: string | null; reload: () => void } {
  const api = useApi();
  const [state, setState] = useState<{ view: RunPhasesView | null; note: string | null }>({ view: null, note: null });
  const load = useCallback(async () => {
    try {
      setState({ view: await api.get<RunPhasesView>(`/v1/runs/${id}/phases`), note: null });
    } catch (e) {
      const why = e instanceof ApiError && e.status === 409 ? `Not ready yet: ${e.message}.` : (e as Error).message;
      setState({ view: null, note: why });
    }
  }, [api, id]);
  useEffect(() => { void load(); }, [load]);
  return { ...state, reload: () => void load() };
}
