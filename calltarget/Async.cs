// Async targets (docs/instrumentation.md, "Async methods"). For a target
// returning Task, Task<T>, ValueTask or ValueTask<T>, when the integration
// has
//
//   TResult OnAsyncMethodEnd<TTarget, TResult>(
//       TTarget instance, TResult result, Exception exception, in CallTargetState state)
//
// the wrapper hands the returned task to CallTargetAsync, which calls it
// when the task completes, with the task's result (TResult = T; for Task
// and ValueTask, TResult = CallTargetReturn, whose text is "void") or its
// exception, and returns a task that completes as the original did: the
// same result (or the one OnAsyncMethodEnd returned), the same exceptions,
// the same cancellation. An exception thrown by OnAsyncMethodEnd is
// ignored. A target that throws before it returns a task gets
// OnAsyncMethodEnd with the exception at once.
using System;
using System.Threading;
using System.Threading.Tasks;

namespace CorProf.CallTarget
{
    /// <summary>OnAsyncMethodEnd, as the wrapper hands it to CallTargetAsync.</summary>
    public delegate TResult AsyncMethodEnd<TTarget, TResult>(TTarget instance, TResult result, Exception exception, in CallTargetState state);

    /// <summary>Calls an integration's OnAsyncMethodEnd when a target's task completes (called by the wrapper).</summary>
    public static class CallTargetAsync
    {
        sealed class Pending<TTarget, TResult>
        {
            public TTarget Instance;
            public CallTargetState State;
            public AsyncMethodEnd<TTarget, TResult> End;

            public TResult Call(TResult result, Exception exception)
            {
                try
                {
                    return End(Instance, result, exception, State);
                }
                catch (Exception)
                {
                    return result;
                }
            }
        }

        // OnAsyncMethodEnd, its exceptions ignored.
        static TResult Call<TTarget, TResult>(AsyncMethodEnd<TTarget, TResult> end, TTarget instance, TResult result, Exception exception, in CallTargetState state)
        {
            try
            {
                return end(instance, result, exception, state);
            }
            catch (Exception)
            {
                return result;
            }
        }

        static Exception Fault(Task task)
        {
            if (task.IsCanceled)
                return new TaskCanceledException(task);
            var all = task.Exception;
            return all != null && all.InnerExceptions.Count == 1 ? all.InnerException : all;
        }

        public static Task<TResult> ContinueTask<TTarget, TResult>(TTarget instance, Task<TResult> task, CallTargetState state, AsyncMethodEnd<TTarget, TResult> end)
        {
            if (task == null)
                return task;
            if (task.Status == TaskStatus.RanToCompletion)
            {
                // Already done (a server's handler often is): no continuation.
                var result = task.Result;
                var replaced = Call(end, instance, result, null, state);
                return System.Collections.Generic.EqualityComparer<TResult>.Default.Equals(replaced, result) ? task : Task.FromResult(replaced);
            }
            var pending = new Pending<TTarget, TResult> { Instance = instance, State = state, End = end };
            return task.ContinueWith((t, o) =>
            {
                var p = (Pending<TTarget, TResult>)o;
                if (t.Status != TaskStatus.RanToCompletion)
                {
                    p.Call(default(TResult), Fault(t));
                    return t;
                }
                var result = t.Result;
                var replaced = p.Call(result, null);
                return System.Collections.Generic.EqualityComparer<TResult>.Default.Equals(replaced, result) ? t : Task.FromResult(replaced);
            }, pending, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).Unwrap();
        }

        public static Task ContinueTask<TTarget>(TTarget instance, Task task, CallTargetState state, AsyncMethodEnd<TTarget, CallTargetReturn> end)
        {
            if (task == null)
                return task;
            if (task.Status == TaskStatus.RanToCompletion)
            {
                // Already done (a server's middleware often is): no continuation.
                Call(end, instance, default(CallTargetReturn), null, state);
                return task;
            }
            var pending = new Pending<TTarget, CallTargetReturn> { Instance = instance, State = state, End = end };
            return task.ContinueWith((t, o) =>
            {
                var p = (Pending<TTarget, CallTargetReturn>)o;
                p.Call(default(CallTargetReturn), t.Status == TaskStatus.RanToCompletion ? null : Fault(t));
                return t;
            }, pending, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).Unwrap();
        }

        public static ValueTask<TResult> ContinueValueTask<TTarget, TResult>(TTarget instance, ValueTask<TResult> task, CallTargetState state, AsyncMethodEnd<TTarget, TResult> end)
        {
            if (task.IsCompletedSuccessfully)
            {
                var pending = new Pending<TTarget, TResult> { Instance = instance, State = state, End = end };
                return new ValueTask<TResult>(pending.Call(task.Result, null));
            }
            return new ValueTask<TResult>(ContinueTask(instance, task.AsTask(), state, end));
        }

        public static ValueTask ContinueValueTask<TTarget>(TTarget instance, ValueTask task, CallTargetState state, AsyncMethodEnd<TTarget, CallTargetReturn> end)
        {
            if (task.IsCompletedSuccessfully)
            {
                var pending = new Pending<TTarget, CallTargetReturn> { Instance = instance, State = state, End = end };
                pending.Call(default(CallTargetReturn), null);
                return task;
            }
            return new ValueTask(ContinueTask(instance, task.AsTask(), state, end));
        }
    }
}
