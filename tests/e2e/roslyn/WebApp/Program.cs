// A small ASP.NET Core 3.1 web server for the end-to-end tests: Kestrel on
// 127.0.0.1 (the port from argv[0], 0 = any free port), plain HTTP.
//
//   /json     a small JSON document (System.Text.Json)
//   /cpu      CPU-bound work (Handlers.Cpu: about 0.2 ms)
//   /throw    throws and catches one WebApp.DemoException
//   /lock     handlers contend on one lock (Handlers.Contend: ~0.1 ms inside it)
//   /stats    counters of the handlers, as text: "json=N cpu=N throw=N lock=N"
//   /contentions  the runtime's count of contended locks (Monitor.LockContentionCount)
// Prints "ready http://127.0.0.1:PORT" once listening, and exits 0 on SIGTERM.
using System;
using System.Linq;
using System.Net;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace WebApp
{
    public sealed class DemoException : Exception
    {
        public DemoException(string message) : base(message) { }
    }

    public static class Handlers
    {
        static readonly object Gate = new object();
        static long json, cpu, thrown, locked;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Json(int id)
        {
            Interlocked.Increment(ref json);
            return System.Text.Json.JsonSerializer.Serialize(new Item { Id = id, Name = "item" + id, Tags = new[] { "a", "b" } });
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Cpu(int rounds)
        {
            Interlocked.Increment(ref cpu);
            ulong h = 1469598103934665603UL;
            for (int i = 0; i < rounds; i++)
            {
                h ^= (ulong)i;
                h *= 1099511628211UL;
            }
            return (long)(h >> 1);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Throw(int id)
        {
            Interlocked.Increment(ref thrown);
            try
            {
                Fail(id);
                return 0;
            }
            catch (DemoException)
            {
                return 1;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Fail(int id)
        {
            throw new DemoException("request " + id);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Contend(int rounds)
        {
            lock (Gate)
            {
                locked++;
                long x = 0;
                for (int i = 0; i < rounds; i++) x += i ^ (x >> 3);
                return x;
            }
        }

        public static string Stats()
        {
            return "json=" + Interlocked.Read(ref json) + " cpu=" + Interlocked.Read(ref cpu) +
                " throw=" + Interlocked.Read(ref thrown) + " lock=" + Interlocked.Read(ref locked);
        }
    }

    public sealed class Item
    {
        public int Id { get; set; }
        public string Name { get; set; }
        public string[] Tags { get; set; }
    }

    public static class Program
    {
        static int requests;

        public static int Main(string[] args)
        {
            int port = args.Length > 0 ? int.Parse(args[0]) : 0;
            IHost host = new HostBuilder()
                .ConfigureWebHost(web => web
                    .UseKestrel(o => o.Listen(IPAddress.Loopback, port))
                    .ConfigureServices(s => s.AddRouting())
                    .Configure(app =>
                    {
                        app.UseRouting();
                        app.UseEndpoints(e =>
                        {
                            e.MapGet("/json", c => Text(c, "application/json", Handlers.Json(Next())));
                            e.MapGet("/cpu", c => Text(c, "text/plain", Handlers.Cpu(200000).ToString()));
                            e.MapGet("/throw", c => Text(c, "text/plain", Handlers.Throw(Next()).ToString()));
                            e.MapGet("/lock", c => Text(c, "text/plain", Handlers.Contend(50000).ToString()));
                            e.MapGet("/stats", c => Text(c, "text/plain", Handlers.Stats()));
                            e.MapGet("/contentions", c => Text(c, "text/plain",
                                System.Threading.Monitor.LockContentionCount.ToString()));
                        });
                    }))
                .Build();
            host.Start();
            var addresses = host.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>();
            string address = addresses.Addresses.First().Replace("[::1]", "127.0.0.1");
            Console.WriteLine("ready " + address);
            Console.Out.Flush();
            host.WaitForShutdown();
            // Without Dispose a 3.1 host hangs on SIGTERM.
            host.Dispose();
            return 0;
        }

        static int Next()
        {
            return Interlocked.Increment(ref requests);
        }

        static Task Text(HttpContext c, string type, string body)
        {
            c.Response.ContentType = type;
            return c.Response.WriteAsync(body);
        }
    }
}
